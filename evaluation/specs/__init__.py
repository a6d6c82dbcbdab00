"""Registering the models that score a project's releases: checks, API and page."""
