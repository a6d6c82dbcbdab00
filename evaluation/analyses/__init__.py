"""Analyses of scores on contrast sets (SPEC §4, §10.3), one module per analysis: pure numpy and
scikit-learn over plain data, no Django. evaluation.analysis_runs runs them on the worker."""
