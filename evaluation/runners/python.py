"""Models written as Python callables: `package.module:callable`, called batch by batch."""

import importlib
from collections.abc import Callable, Sequence
from typing import Any

from evaluation.runners.base import Predictions, Progress, RunnerError


def load_callable(source: str) -> Callable[..., Any]:
    module_name, sep, attribute = source.partition(":")
    if not sep or not module_name or not attribute:
        raise RunnerError(f"A python model is package.module:callable, not {source!r}.")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise RunnerError(f"Cannot import {module_name!r}: {error}") from None
    function = getattr(module, attribute, None)
    if not callable(function):
        raise RunnerError(f"{source!r} is not a callable.")
    return function


def predict_python(
    source: str, examples: Sequence[dict[str, str]], batch_size: int, progress: Progress | None
) -> Predictions:
    """Call `package.module:callable` with lists of field dicts, batch by batch. It returns
    labels, or (labels, probabilities)."""
    function = load_callable(source)
    labels: list[str] = []
    probabilities: list[dict[str, float]] = []
    for start in range(0, len(examples), batch_size):
        batch = list(examples[start : start + batch_size])
        result = function(batch)
        batch_labels, batch_probs = result if isinstance(result, tuple) else (result, None)
        batch_labels = list(batch_labels)
        if len(batch_labels) != len(batch):
            raise RunnerError(
                f"{source} returned {len(batch_labels)} labels for {len(batch)} examples."
            )
        labels += [str(label) for label in batch_labels]
        probabilities += list(batch_probs) if batch_probs is not None else [{}] * len(batch)
        if progress:
            progress(len(batch))
    return Predictions(labels, probabilities)
