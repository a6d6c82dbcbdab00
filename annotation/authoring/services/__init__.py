"""Authoring's writes (docs/workflows.md): claims (an expert reserves a pivot, and writes an
original's answer) and drafts (save, submit, withdraw a perturbation)."""
