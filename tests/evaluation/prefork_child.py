"""Run in a Celery prefork child (billiard) by test_feed.py; imports no Django, since the child
starts with a clean interpreter."""

from evaluation.runners import feed
from evaluation.runners.classifier import SequenceClassifier


def score(directory: str, texts: list[str]) -> tuple[bool, list[str]]:
    """Whether the runner tokenises on a thread here, and its labels for `texts`."""
    feed.IN_PROCESS.add("cpu")
    runner = SequenceClassifier(directory, device="cpu", max_length=12)
    return runner.process is None, runner.predict([[t] for t in texts], batch_size=2).labels
