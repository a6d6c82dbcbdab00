"""What every runner shares: its result, its error, and the device it runs on."""

from collections.abc import Callable
from dataclasses import dataclass

Progress = Callable[[int], None]  # called with the number of examples just finished


class RunnerError(Exception):
    """A problem the admin can fix: a missing model, labels that don't map, no CUDA, ..."""


@dataclass
class Predictions:
    labels: list[str]
    probabilities: list[dict[str, float]]


def resolve_device(requested: str) -> str:
    import torch

    if requested == "cuda" and not torch.cuda.is_available():
        raise RunnerError("CUDA is not available on this worker; use device auto or cpu.")
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return requested
