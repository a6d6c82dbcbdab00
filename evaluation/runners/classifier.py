"""Sequence classification with transformers."""

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from evaluation.runners.base import Predictions, Progress
from evaluation.runners.feed import (
    Batches,
    Readback,
    inference,
    length_mask,
    on_device,
    pad_rows,
    prepared,
    tokenising_process,
    width_multiple,
)
from evaluation.runners.loading import load_model, resolve_device

CHUNK = 2048  # examples tokenised, sorted and padded together, ahead of the device


class SequenceClassifier:
    """A transformers sequence classifier, scored in length-sorted batches."""

    def __init__(
        self,
        source: str,
        *,
        device: str = "auto",
        precision: str = "fp32",
        max_length: int = 256,
        allow_random: bool = False,
    ):
        from transformers import AutoModelForSequenceClassification

        self.device = resolve_device(device)
        # Started first, so that it is up by the time the model is loaded.
        self.process = tokenising_process(self.device)  # None: tokenise on a thread
        if self.process:
            weakref.finalize(self, self.process.shutdown, cancel_futures=True)
        loaded = load_model(
            AutoModelForSequenceClassification,
            source,
            head="classification head",
            device=self.device,
            precision=precision,
            allow_random=allow_random,
            needs_fast="its batches are tokenised in Rust, off the device's thread",
        )
        self.model, self.tokenizer, self.pad_id = loaded.model, loaded.tokenizer, loaded.pad_id
        # A longer max_length than the model's positions would fail on long texts.
        self.max_length = min(max_length, self.tokenizer.model_max_length)
        self.id2label = {int(i): str(name) for i, name in self.model.config.id2label.items()}
        self.tokenizer_json = self.tokenizer.backend_tokenizer.to_str()  # what ChunkEncoder takes

    def predict(
        self, inputs: Sequence[Sequence[str]], batch_size: int, progress: Progress | None = None
    ) -> Predictions:
        """Score one or two text fields per example.

        Examples are tokenised a chunk at a time, ahead of the device; each chunk is sorted by
        token length and padded batch by batch, so batches hold sequences of similar length
        and padding stays small."""
        import torch

        names = [self.id2label[i] for i in range(len(self.id2label))]
        probabilities = np.zeros((len(inputs), len(names)), dtype=np.float32)

        def finish(rows: np.ndarray, outputs: tuple[np.ndarray, ...]) -> None:
            probabilities[rows] = outputs[0]
            if progress:
                progress(len(rows))

        readback = Readback(self.device, finish)
        encode = self.encoder(batch_size)
        chunks = ((start, inputs[start : start + CHUNK]) for start in range(0, len(inputs), CHUNK))
        with inference(self.device):
            for batches in prepared(encode, chunks, self.device, self.process):
                for rows, tensors in batches:
                    logits = self.model(**on_device(tensors, self.device)).logits
                    readback.add(rows, torch.softmax(logits.float(), dim=-1))
            readback.close()
        best = probabilities.argmax(axis=1).tolist()
        return Predictions(
            [names[b] for b in best],
            [dict(zip(names, row, strict=True)) for row in probabilities.tolist()],
        )

    def encoder(self, batch_size: int) -> "ChunkEncoder":
        names = set(self.tokenizer.model_input_names)
        return ChunkEncoder(
            tokenizer=self.tokenizer_json,
            max_length=self.max_length,
            batch_size=batch_size,
            multiple=width_multiple(self.device),
            pad_id=self.pad_id,
            pad_type_id=self.tokenizer.pad_token_type_id,
            mask="attention_mask" in names,
            types="token_type_ids" in names,
        )


@dataclass(frozen=True)
class ChunkEncoder:
    """Tokenises a chunk of examples, sorts it by length and cuts it into padded batches of
    numpy arrays. It pickles (the tokenizer travels as JSON), so it can run in another
    process."""

    tokenizer: str  # the Rust tokenizer, as JSON
    max_length: int
    batch_size: int
    multiple: int  # widths are rounded up to a multiple of this
    pad_id: int
    pad_type_id: int
    mask: bool  # the model takes an attention mask
    types: bool  # the model takes token types

    def __call__(self, chunk: Sequence[Sequence[str]]) -> Batches:
        pairs = len(chunk[0]) == 2
        backend = _backend(self.tokenizer, self.max_length)
        encodings = backend.encode_batch([tuple(x) if pairs else x[0] for x in chunk])
        lengths = np.fromiter(map(len, encodings), dtype=np.int64, count=len(encodings))
        order = np.argsort(lengths, kind="stable")
        batches = []
        for first in range(0, len(order), self.batch_size):
            batch = order[first : first + self.batch_size]
            rows = [encodings[i] for i in batch]
            ids = pad_rows([e.ids for e in rows], self.pad_id, self.multiple)
            arrays = {"input_ids": ids}
            if self.mask:
                arrays["attention_mask"] = length_mask(lengths[batch], ids.shape[1])
            if pairs and self.types:  # else all 0, the default
                types = [e.type_ids for e in rows]
                arrays["token_type_ids"] = pad_rows(types, self.pad_type_id, 1, ids.shape[1])
            batches.append((batch, arrays))
        return batches


@lru_cache(maxsize=4)
def _backend(tokenizer: str, max_length: int) -> Any:
    """The tokenizer's Rust half, truncating as `tokenizer(..., truncation=True)` does."""
    from tokenizers import Tokenizer

    backend = Tokenizer.from_str(tokenizer)
    backend.no_padding()
    backend.enable_truncation(max_length)
    return backend
