"""Fine-tuning a sequence classifier for inoculation (docs/metrics.md, docs/analyses.md), on the
worker.

Each fine-tuning starts from the base model's weights, trains with AdamW on shuffled batches,
and keeps the epoch with the best accuracy on the early-stopping examples (patience 5). The best
weights are kept in memory and the base weights restored afterwards: nothing is written to
disk.
"""

import copy
from collections.abc import Callable, Sequence
from typing import Any

from evaluation.runners.base import RunnerError
from evaluation.runners.loading import load_model

PATIENCE = 5


class ClassifierTrainer:
    def __init__(
        self,
        source: str,
        *,
        label_mapping: dict[str, str],
        device: str = "auto",
        precision: str = "fp32",
        max_length: int = 256,
        batch_size: int = 16,
        allow_random: bool = False,
    ):
        from transformers import AutoModelForSequenceClassification

        loaded = load_model(
            AutoModelForSequenceClassification,
            source,
            head="classification head",
            device=device,
            precision=precision,
            allow_random=allow_random,
            master_fp32=True,  # autocast computes in bf16/fp16
        )
        self.model: Any = loaded.model
        self.tokenizer, self.device, self.dtype = loaded.tokenizer, loaded.device, loaded.dtype
        self.batch_size = batch_size
        self.max_length = min(max_length, self.tokenizer.model_max_length)
        names = {int(i): str(n) for i, n in self.model.config.id2label.items()}
        # project label -> the model's class index, through the spec's label mapping
        self.index = {label_mapping.get(name, name): i for i, name in names.items()}
        self.label_of = {i: label for label, i in self.index.items()}
        self.base = copy.deepcopy(self.model.state_dict())

    def reset(self) -> None:
        self.model.load_state_dict(self.base)

    def accuracy(self, texts: Sequence[str], labels: Sequence[str]) -> float:
        import torch

        if not texts:
            return float("nan")
        self.model.eval()
        right = 0
        with torch.inference_mode(), self._autocast():
            for start in range(0, len(texts), self.batch_size):
                batch = self._encode(texts[start : start + self.batch_size])
                predicted = self.model(**batch).logits.argmax(dim=-1).tolist()
                gold = labels[start : start + self.batch_size]
                right += sum(self.label_of[p] == g for p, g in zip(predicted, gold, strict=True))
        return right / len(texts)

    def fine_tune(
        self,
        texts: Sequence[str],
        labels: Sequence[str],
        *,
        learning_rate: float,
        max_epochs: int,
        seed: int,
        early_stopping: tuple[Sequence[str], Sequence[str]],
        alive: Callable[[], None] = lambda: None,
    ) -> int:
        """Train from the base weights; leave the model at its best epoch and return that
        epoch (0 when no epoch beat the base model). `alive` runs after every epoch (progress,
        and raising to cancel)."""
        import torch

        unknown = sorted(set(labels) - set(self.index))
        if unknown:
            raise RunnerError(
                f"The model has no class for {', '.join(unknown)}; set label_mapping."
            )
        self.reset()
        best_epoch, best = 0, self.accuracy(*early_stopping)
        best_state = copy.deepcopy(self.model.state_dict())
        generator = torch.Generator().manual_seed(seed)
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=learning_rate)
        targets = torch.tensor([self.index[label] for label in labels])
        stale = 0
        for epoch in range(1, max_epochs + 1):
            self.model.train()
            for batch in torch.randperm(len(texts), generator=generator).split(self.batch_size):
                encoded = self._encode([texts[i] for i in batch.tolist()])
                with self._autocast():
                    loss = self.model(**encoded, labels=targets[batch].to(self.device)).loss
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            alive()
            accuracy = self.accuracy(*early_stopping)
            if accuracy > best:
                best_epoch, best, stale = epoch, accuracy, 0
                best_state = copy.deepcopy(self.model.state_dict())
            else:
                stale += 1
                if stale >= PATIENCE:
                    break
        self.model.load_state_dict(best_state)
        return best_epoch

    def _encode(self, texts: Sequence[str]) -> Any:
        encoded = self.tokenizer(
            list(texts),
            truncation=True,
            max_length=self.max_length,
            padding=True,
            return_tensors="pt",
        )
        return {key: value.to(self.device) for key, value in encoded.items()}

    def _autocast(self) -> Any:
        import torch

        enabled = self.device == "cuda" and self.dtype != torch.float32
        return torch.autocast(device_type=self.device, dtype=self.dtype, enabled=enabled)
