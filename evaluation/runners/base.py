"""What every runner shares: its result, its progress and its errors. How a torch runner loads
its model is `loading.py`."""

from collections.abc import Callable
from dataclasses import dataclass

Progress = Callable[[int], None]  # called with the number of examples just finished


class RunnerError(Exception):
    """A problem the admin can fix: a missing model, labels that don't map, no CUDA, ..."""


class LoadError(RunnerError):
    """A model that could not be loaded from its source (a folder, or the hub)."""


class RandomWeights(RunnerError):
    """A model whose checkpoint lacks weights its kind needs (a classification head, say):
    transformers would initialise them at random and the run would score noise."""


@dataclass
class Predictions:
    labels: list[str]
    probabilities: list[dict[str, float]]
