"""Evaluation runs: enqueueing from the web process, scoring on a worker (classifiers, readers,
language models over minimal pairs), and the results that pages and the API show."""
