"""Sequence classification with transformers."""

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from evaluation.runners.base import (
    Predictions,
    Progress,
    RunnerError,
    resolve_device,
    resolve_dtype,
)
from evaluation.runners.feed import (
    Readback,
    ahead,
    host_tensors,
    inference,
    length_mask,
    on_device,
    pad_rows,
    width_multiple,
)

CHUNK = 2048  # examples tokenised, sorted and padded together, ahead of the device


class SequenceClassifier:
    """A transformers sequence classifier, scored in length-sorted batches."""

    def __init__(
        self, source: str, *, device: str = "auto", precision: str = "fp32", max_length: int = 256
    ):
        import torch  # noqa: F401 - fail here, clearly, if torch is missing
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.device = resolve_device(device)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(source, use_fast=True)
            self.model = AutoModelForSequenceClassification.from_pretrained(source)
        except (OSError, ValueError) as error:
            raise RunnerError(f"Cannot load model {source!r}: {error}") from None
        if not self.tokenizer.is_fast:
            raise RunnerError(f"Model {source!r} has no fast tokenizer.")
        dtype = resolve_dtype(precision, self.device)
        self.model = self.model.to(device=self.device, dtype=dtype).eval()
        # A longer max_length than the model's positions would fail on long texts.
        self.max_length = min(max_length, self.tokenizer.model_max_length)
        self.id2label = {int(i): str(name) for i, name in self.model.config.id2label.items()}
        # The tokenizer's Rust half, truncating as `tokenizer(..., truncation=True)` does
        self.backend = self.tokenizer.backend_tokenizer.__class__.from_str(
            self.tokenizer.backend_tokenizer.to_str()
        )
        self.backend.no_padding()
        self.backend.enable_truncation(self.max_length)
        self.input_names = set(self.tokenizer.model_input_names)
        self.pad_id = self.tokenizer.pad_token_id or 0
        self.pad_type_id = self.tokenizer.pad_token_type_id

    def predict(
        self, inputs: Sequence[Sequence[str]], batch_size: int, progress: Progress | None = None
    ) -> Predictions:
        """Score one or two text fields per example.

        Examples are tokenised a chunk at a time on a thread, ahead of the device; each chunk
        is sorted by token length and padded batch by batch, so batches hold sequences of
        similar length and padding stays small."""
        import torch

        names = [self.id2label[i] for i in range(len(self.id2label))]
        probabilities = np.zeros((len(inputs), len(names)), dtype=np.float32)

        def finish(rows: np.ndarray, outputs: tuple[np.ndarray, ...]) -> None:
            probabilities[rows] = outputs[0]
            if progress:
                progress(len(rows))

        readback = Readback(self.device, finish)
        chunks = range(0, len(inputs), CHUNK)
        jobs = (partial(self._prepare, inputs, start, batch_size) for start in chunks)
        with inference(self.device):
            for batches in ahead(jobs):
                for rows, tensors in batches:
                    logits = self.model(**on_device(tensors, self.device)).logits
                    readback.add(rows, torch.softmax(logits.float(), dim=-1))
            readback.close()
        best = probabilities.argmax(axis=1).tolist()
        return Predictions(
            [names[b] for b in best],
            [dict(zip(names, row, strict=True)) for row in probabilities.tolist()],
        )

    def _prepare(
        self, inputs: Sequence[Sequence[str]], start: int, batch_size: int
    ) -> list[tuple[np.ndarray, dict[str, Any]]]:
        """One chunk, tokenised, sorted by length and cut into padded batches of host
        tensors: [(the examples' indices, tensors)].

        The Rust tokenizer encodes the chunk without holding the GIL, and only each row's ids
        (and token types, for pairs) become Python lists: the device's thread, which needs
        the GIL to launch kernels, is kept waiting as little as possible."""
        chunk = inputs[start : start + CHUNK]
        pairs = len(chunk[0]) == 2
        encodings = self.backend.encode_batch([tuple(x) if pairs else x[0] for x in chunk])
        lengths = np.fromiter(map(len, encodings), dtype=np.int64, count=len(encodings))
        order = np.argsort(lengths, kind="stable")
        multiple = width_multiple(self.device)
        batches = []
        for first in range(0, len(order), batch_size):
            batch = order[first : first + batch_size]
            rows = [encodings[i] for i in batch]
            ids = pad_rows([e.ids for e in rows], self.pad_id, multiple)
            arrays = {"input_ids": ids}
            if "attention_mask" in self.input_names:
                arrays["attention_mask"] = length_mask(lengths[batch], ids.shape[1])
            if pairs and "token_type_ids" in self.input_names:  # else all 0, the default
                types = [e.type_ids for e in rows]
                arrays["token_type_ids"] = pad_rows(types, self.pad_type_id, multiple, ids.shape[1])
            batches.append((batch + start, host_tensors(arrays, self.device)))
        return batches
