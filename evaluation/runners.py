"""Model runners: the only module that imports torch and transformers, and only inside the
functions that need them, so that the web process never loads them."""

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

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


class SequenceClassifier:
    """A transformers sequence classifier, scored in length-sorted batches."""

    def __init__(self, source: str, *, device: str = "auto", max_length: int = 256):
        import torch  # noqa: F401 - fail here, clearly, if torch is missing
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.device = resolve_device(device)
        self.max_length = max_length
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(source, use_fast=True)
            self.model = AutoModelForSequenceClassification.from_pretrained(source)
        except (OSError, ValueError) as error:
            raise RunnerError(f"Cannot load model {source!r}: {error}") from None
        if not self.tokenizer.is_fast:
            raise RunnerError(f"Model {source!r} has no fast tokenizer.")
        self.model.to(self.device).eval()
        self.id2label = {int(i): str(name) for i, name in self.model.config.id2label.items()}

    def predict(
        self, inputs: Sequence[Sequence[str]], batch_size: int, progress: Progress | None = None
    ) -> Predictions:
        """Score one or two text fields per example.

        The fast tokenizer runs once over every example; examples are then sorted by token
        length and padded batch by batch, so batches hold sequences of similar length and
        padding stays small."""
        import torch

        columns = [list(column) for column in zip(*inputs, strict=True)]
        encoded = self.tokenizer(*columns, truncation=True, max_length=self.max_length)
        keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in encoded]
        lengths = [len(ids) for ids in encoded["input_ids"]]
        order = sorted(range(len(inputs)), key=lengths.__getitem__)
        pad = {"input_ids": self.tokenizer.pad_token_id or 0, "attention_mask": 0,
               "token_type_ids": self.tokenizer.pad_token_type_id}  # fmt: skip
        names = [self.id2label[i] for i in range(len(self.id2label))]
        labels: list[str] = [""] * len(inputs)
        probabilities: list[dict[str, float]] = [{}] * len(inputs)
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                batch = order[start : start + batch_size]
                width = max(lengths[i] for i in batch)
                tensors = {}
                for key in keys:
                    rows = [encoded[key][i] + [pad[key]] * (width - lengths[i]) for i in batch]
                    tensors[key] = torch.tensor(rows, device=self.device)
                logits = self.model(**tensors).logits.float()
                probs = torch.softmax(logits, dim=-1).cpu().tolist()
                for row, i in zip(probs, batch, strict=True):
                    best = max(range(len(row)), key=row.__getitem__)
                    labels[i] = names[best]
                    probabilities[i] = dict(zip(names, row, strict=True))
                if progress:
                    progress(len(batch))
        return Predictions(labels, probabilities)


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
