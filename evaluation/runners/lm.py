"""Language-model scoring for minimal pairs (docs/metrics.md, docs/task-types.md):
log-probabilities of texts, and
the model's own output for a source.

Tokenisation decides the scores, so it is exactly as §10.2 says:
- causal (`hf-causal-lm`): the scored tokens are `tokenizer(text, add_special_tokens=False)`;
  the unscored context is `[bos_token_id]` without a source, and the tokens of
  the prompt over the source (no BOS) with one. score = the sum of the tokens' log-probs.
- seq2seq (`hf-seq2seq`): the encoder reads `tokenizer(source)` and the scored tokens are
  `tokenizer(text_target=text)`, as the tokenizer returns them; the decoder starts from
  `decoder_start_token_id`. score = the mean of the tokens' log-probs.

Each distinct (context, tokens) pair is scored once and the score reused, so two texts with
identical tokens always tie, however they are batched. Sequences are sorted by length and
padded on the right per batch, and fed to the device as `feed` says.
"""

from collections import Counter
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from annotation.prompting import render_prompt
from evaluation.runners.base import Progress, RunnerError
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
from evaluation.runners.loading import load_language_model

Key = tuple[tuple[int, ...], tuple[int, ...]]  # (context or encoder ids, scored ids)


class LanguageModelScorer:
    def __init__(
        self,
        source: str,
        *,
        seq2seq: bool,
        device: str = "auto",
        precision: str = "fp32",
        prompt: str = "{source}\n",
        allow_random: bool = False,
    ):
        self.seq2seq = seq2seq
        self.prompt = prompt
        loaded = load_language_model(
            source, seq2seq=seq2seq, device=device, precision=precision, allow_random=allow_random
        )
        self.model: Any = loaded.model
        self.tokenizer, self.device, self.pad_id = loaded.tokenizer, loaded.device, loaded.pad_id
        config = self.model.config
        if seq2seq:
            self.start_id = config.decoder_start_token_id
            if self.start_id is None:
                raise RunnerError(f"Model {source!r} has no decoder_start_token_id.")
        else:
            self.bos_id = self.tokenizer.bos_token_id
            if self.bos_id is None:
                self.bos_id = config.bos_token_id
            if self.bos_id is None:
                raise RunnerError(f"Model {source!r} has no BOS token to score the first word.")

    # Tokens ---------------------------------------------------------------------------------

    def context(self, source: str | None) -> tuple[int, ...]:
        """What the scored tokens follow: the encoder's input (seq2seq) or the causal prefix."""
        if self.seq2seq:
            return tuple(self.tokenizer(source or "")["input_ids"])
        if source is None:
            return (self.bos_id,)
        text = render_prompt(self.prompt, {"source": source})
        return tuple(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def target(self, text: str) -> tuple[int, ...]:
        if self.seq2seq:
            return tuple(self.tokenizer(text_target=text)["input_ids"])
        return tuple(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    # Scores ---------------------------------------------------------------------------------

    def score(
        self,
        texts: Sequence[str],
        sources: Sequence[str | None],
        batch_size: int,
        progress: Progress | None = None,
    ) -> list[float]:
        """The score of each text after its source (§4), in the order given."""
        keys = [(self.context(s), self.target(t)) for t, s in zip(texts, sources, strict=True)]
        scores = self.score_keys(keys, batch_size, progress)
        return [scores[key] for key in keys]

    def score_keys(
        self, keys: Sequence[Key], batch_size: int, progress: Progress | None = None
    ) -> dict[Key, float]:
        """Scores of the distinct keys; `progress` hears of the keys' examples as they finish."""
        examples = Counter(keys)
        unique = sorted(examples, key=lambda k: (len(k[0]) + len(k[1]), k))
        if any(not target for _, target in unique):
            raise RunnerError("A text has no tokens to score.")
        scores: dict[Key, float] = {}

        def finish(batch: list[Key], outputs: tuple[np.ndarray, ...]) -> None:
            scores.update(zip(batch, outputs[0].tolist(), strict=True))
            if progress:
                progress(sum(examples[key] for key in batch))

        readback = Readback(self.device, finish)
        prepare = self._seq2seq_inputs if self.seq2seq else self._causal_inputs
        starts = range(0, len(unique), batch_size)
        with inference(self.device):
            for batch, tensors in ahead(
                partial(prepare, unique[s : s + batch_size]) for s in starts
            ):
                readback.add(batch, self._scores(on_device(tensors, self.device)))
            readback.close()
        return scores

    def _causal_inputs(self, batch: list[Key]) -> tuple[list[Key], dict[str, Any]]:
        """Context + target ids, and which next-token predictions are scored: position p
        predicts token p + 1, so the target's tokens are predicted from len(context) - 1 on."""
        ids = self._pad([list(context) + list(target) for context, target in batch])
        scored = np.zeros((len(batch), ids.shape[1] - 1), dtype=bool)
        for row, (context, target) in enumerate(batch):
            scored[row, len(context) - 1 : len(context) - 1 + len(target)] = True
        lengths = [len(context) + len(target) for context, target in batch]
        arrays = {"input_ids": ids, "attention_mask": length_mask(lengths, ids.shape[1])}
        return batch, host_tensors({**arrays, "scored": scored}, self.device)

    def _seq2seq_inputs(self, batch: list[Key]) -> tuple[list[Key], dict[str, Any]]:
        encoder = self._pad([list(source) for source, _ in batch])
        decoder = self._pad([[self.start_id, *target[:-1]] for _, target in batch])
        labels = self._pad([list(target) for _, target in batch])
        targets = [len(target) for _, target in batch]
        arrays = {
            "input_ids": encoder,
            "attention_mask": length_mask([len(s) for s, _ in batch], encoder.shape[1]),
            "decoder_input_ids": decoder,
            "decoder_attention_mask": length_mask(targets, decoder.shape[1]),
            "labels": labels,
            "scored": length_mask(targets, labels.shape[1]).astype(bool),
        }
        return batch, host_tensors(arrays, self.device)

    def _scores(self, tensors: dict[str, Any]) -> Any:
        """Causal: the sum of the scored tokens' log-probs; seq2seq: their mean (float64)."""
        import torch

        scored, labels = tensors.pop("scored"), tensors.pop("labels", None)
        logits = self.model(**tensors).logits.float()
        if not self.seq2seq:  # position p predicts token p + 1
            logits, labels = logits[:, :-1], tensors["input_ids"][:, 1:]
        picked = torch.log_softmax(logits, dim=-1).gather(-1, labels[..., None])[..., 0]
        total = torch.where(scored, picked.double(), 0.0).sum(dim=1)
        return total / scored.sum(dim=1) if self.seq2seq else total

    def _pad(self, rows: list[list[int]]) -> np.ndarray:
        return pad_rows(rows, self.pad_id, width_multiple(self.device))

    # The model's own output -----------------------------------------------------------------

    def generate(
        self, source: str, *, num_beams: int = 1, max_new_tokens: int = 64
    ) -> tuple[str, Key]:
        """ŷ for a source, by greedy search (or beam search): its text, and its key to score
        exactly like a text (its generated ids after the prompt or the start token)."""
        import torch

        context = self.context(source)
        ids = torch.tensor([list(context)], device=self.device)
        with torch.inference_mode():
            output = self.model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                do_sample=False,
                num_beams=num_beams,
                max_new_tokens=max_new_tokens,
                pad_token_id=self.pad_id,
            )[0].tolist()
        generated = output[1:] if self.seq2seq else output[len(context) :]
        generated = generated or [self.pad_id]
        text = str(self.tokenizer.decode(generated, skip_special_tokens=True))
        return text, (context, tuple(generated))
