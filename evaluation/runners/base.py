"""What every runner shares: its result, its error, and the device it runs on."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Progress = Callable[[int], None]  # called with the number of examples just finished


class RunnerError(Exception):
    """A problem the admin can fix: a missing model, labels that don't map, no CUDA, ..."""


class LoadError(RunnerError):
    """A model that could not be loaded from its source (a folder, or the hub)."""


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


def resolve_dtype(precision: str, device: str) -> Any:
    """The torch dtype of a precision (docs/performance.md): fp32 everywhere; bf16 and fp16 on
    CUDA."""
    import torch

    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
    if precision not in dtypes:
        raise RunnerError(f"Unknown precision {precision!r}; use fp32, bf16 or fp16.")
    if precision != "fp32" and device != "cuda":
        raise RunnerError(f"{precision} runs on CUDA only; use fp32 on the CPU.")
    return dtypes[precision]
