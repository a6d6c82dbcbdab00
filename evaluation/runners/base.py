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


class RandomWeights(RunnerError):
    """A model whose checkpoint lacks weights its kind needs (a classification head, say):
    transformers would initialise them at random and the run would score noise."""


def load_pretrained(
    loader: Any, source: str, *, head: str, allow_random: bool, **options: Any
) -> Any:
    """`loader.from_pretrained(source)`, refused when the checkpoint lacks weights that
    transformers would initialise at random (`missing_keys` of its loading info), unless the
    spec allows it (docs/models.md). `head` names what the kind needs, for the message."""
    try:
        model, info = loader.from_pretrained(source, output_loading_info=True, **options)
    except (OSError, ValueError) as error:
        raise LoadError(f"Cannot load model {source!r}: {error}") from None
    missing = sorted(info.get("missing_keys") or ())
    if missing and not allow_random:
        shown = ", ".join(missing[:6]) + (
            f" and {len(missing) - 6} more" if len(missing) > 6 else ""
        )
        raise RandomWeights(
            f"The model has no {head}: its checkpoint lacks {shown}, which transformers would "
            "initialise at random, so every prediction would be noise. Register a model "
            f"trained for this task (this checkpoint was saved as {_architectures(model)}), or, "
            "for a deliberate baseline, allow random weights on the model."
        )
    return model


def _architectures(model: Any) -> str:
    names = getattr(model.config, "architectures", None) or ["no architecture"]
    return ", ".join(names)
