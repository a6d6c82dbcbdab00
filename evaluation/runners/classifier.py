"""Sequence classification with transformers."""

from collections.abc import Sequence

from evaluation.runners.base import (
    Predictions,
    Progress,
    RunnerError,
    resolve_device,
    resolve_dtype,
)


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
