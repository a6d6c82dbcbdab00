"""Extractive question answering with transformers (docs/task-types.md): the best span of the
context
from the start and end logits, over overlapping windows when the context is long."""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from evaluation.runners.base import Progress, RunnerError
from evaluation.runners.feed import (
    Readback,
    ahead,
    host_tensors,
    inference,
    on_device,
    pad_encoding,
    width_multiple,
)
from evaluation.runners.loading import load_model


@dataclass
class Answers:
    texts: list[str]
    scores: list[float]  # start + end logit of each chosen span


class ExtractiveQA:
    """A transformers question-answering model (AutoModelForQuestionAnswering with a fast
    tokenizer), scored in length-sorted batches."""

    def __init__(
        self,
        source: str,
        *,
        device: str = "auto",
        precision: str = "fp32",
        max_length: int = 384,
        stride: int = 128,
        max_answer_tokens: int = 30,
        allow_random: bool = False,
    ):
        from transformers import AutoModelForQuestionAnswering

        loaded = load_model(
            AutoModelForQuestionAnswering,
            source,
            head="question-answering head (span start and end)",
            device=device,
            precision=precision,
            allow_random=allow_random,
            needs_fast="spans need offsets",
        )
        self.model, self.tokenizer, self.device = loaded.model, loaded.tokenizer, loaded.device
        self.max_length = min(max_length, self.tokenizer.model_max_length)
        if stride >= self.max_length:
            raise RunnerError(f"stride ({stride}) must be below max_length ({self.max_length}).")
        self.stride = stride
        self.max_answer_tokens = max_answer_tokens

    def predict(
        self,
        questions: Sequence[str],
        contexts: Sequence[str],
        batch_size: int,
        progress: Progress | None = None,
    ) -> Answers:
        """The best answer span for each (question, context). Examples are sorted by length,
        then each batch is tokenised into windows (`stride` tokens of overlap) whose best
        valid span (in the context, start <= end, at most max_answer_tokens) competes with
        the other windows of the same example."""
        order = sorted(range(len(questions)), key=lambda i: len(questions[i]) + len(contexts[i]))
        texts, scores = [""] * len(questions), [float("-inf")] * len(questions)

        def finish(meta: tuple, outputs: tuple[np.ndarray, ...]) -> None:
            examples, offsets, done = meta
            for i, offset, s, e, value in zip(examples, offsets, *outputs, strict=True):
                if value > scores[i]:
                    scores[i] = float(value)
                    texts[i] = contexts[i][offset[s][0] : offset[e][1]]
            if progress and done:
                progress(done)

        readback = Readback(self.device, finish)
        batches = (order[start : start + batch_size] for start in range(0, len(order), batch_size))
        jobs = (partial(self._prepare, questions, contexts, batch, batch_size) for batch in batches)
        with inference(self.device):
            for windows in ahead(jobs):
                for meta, tensors, in_context in windows:
                    out = self.model(**on_device(tensors, self.device))
                    spans = self._best_spans(
                        out.start_logits.float(),
                        out.end_logits.float(),
                        in_context.to(self.device, non_blocking=True),
                    )
                    readback.add(meta, *spans)
            readback.close()
        return Answers(texts, scores)

    def _prepare(
        self, questions: Sequence[str], contexts: Sequence[str], batch: list[int], size: int
    ) -> list[tuple[tuple, dict[str, Any], Any]]:
        """A batch of examples as windows, in padded batches of host tensors:
        [((each window's example, its offsets, examples finished), tensors, in-context mask)].
        The last window batch counts the examples as finished."""
        encoded = self._encode([questions[i] for i in batch], [contexts[i] for i in batch])
        owners = [batch[o] for o in encoded["overflow_to_sample_mapping"]]
        multiple = width_multiple(self.device)
        windows = []
        for first in range(0, len(owners), size):
            rows = range(first, min(first + size, len(owners)))
            arrays = pad_encoding(encoded, rows, self.tokenizer, multiple)
            in_context = np.zeros(arrays["input_ids"].shape, dtype=bool)
            for row, f in enumerate(rows):
                ids = encoded.sequence_ids(f)
                in_context[row, : len(ids)] = [sid == 1 for sid in ids]
            done = len(batch) if rows.stop == len(owners) else 0
            meta = (owners[first : rows.stop], encoded["offset_mapping"][first : rows.stop], done)
            tensors = host_tensors(arrays, self.device)
            windows.append((meta, tensors, host_tensors({"m": in_context}, self.device)["m"]))
        return windows

    def _encode(self, questions: list[str], contexts: list[str]):  # type: ignore[no-untyped-def]
        try:
            return self.tokenizer(
                questions,
                contexts,
                truncation="only_second",
                max_length=self.max_length,
                stride=self.stride,
                return_overflowing_tokens=True,
                return_offsets_mapping=True,
            )
        except Exception as error:  # the tokenizer's own errors, e.g. a question too long
            raise RunnerError(f"Cannot tokenise the questions: {error}") from None

    def _best_spans(self, start_logits, end_logits, in_context):  # type: ignore[no-untyped-def]
        """Per window: (start, end, score) of the best span inside the context."""
        import torch

        length = start_logits.shape[1]
        positions = torch.arange(length, device=start_logits.device)
        gap = positions[None, :] - positions[:, None]  # end - start
        band = (gap >= 0) & (gap < self.max_answer_tokens)
        valid = band[None] & in_context[:, :, None] & in_context[:, None, :]
        pair = start_logits[:, :, None] + end_logits[:, None, :]
        pair = pair.masked_fill(~valid, float("-inf"))
        values, flat = pair.view(pair.shape[0], -1).max(dim=1)
        return flat // length, flat % length, values
