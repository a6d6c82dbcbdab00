"""Analyses of a project's releases and runs (docs/analyses.md): checking and queueing them
(services), running them on a worker (execute), the pure analyses themselves (artifacts,
inoculation, instability: numpy and scikit-learn over plain data, no Django), API and pages."""
