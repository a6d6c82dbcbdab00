"""Prompted language models on classification and free-text releases (docs/prompting.md).

The conventions are lm-evaluation-harness's (its `hf` backend), so that the figures compare:

- Tokens: the harness's (evaluation/runners/prompt_tokens.py), each distinct text tokenised
  once, in batches.
- A choice's log-likelihood is the sum of its tokens' log-probabilities.
- Inputs longer than the model's context are cut on the left.

The prompt runs once per example: its cache (causal) or encoder output (seq2seq) is shared by
all the choices. Examples are sorted by length and batched; generation is greedy.
"""

import inspect
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

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
from evaluation.runners.prompt_tokens import PromptTokens, Unit

POSITION_ATTRIBUTES = ("n_positions", "max_position_embeddings", "n_ctx")
DEFAULT_CONTEXT = 2048  # the harness's, for models that name no length
# Examples tokenised together, a chunk ahead of the device: on an H100, tokenising every example
# before the first batch took 55-80% of the time (issue 46).
CHUNK = 512


class PromptedModel:
    """A causal or seq2seq transformers model, scored as lm-evaluation-harness scores it."""

    def __init__(
        self,
        source: str,
        *,
        seq2seq: bool,
        device: str = "auto",
        precision: str = "fp32",
        allow_random: bool = False,
        batch_size: int = 8,
    ):
        self.seq2seq, self.batch_size = seq2seq, batch_size
        loaded = load_language_model(
            source,
            seq2seq=seq2seq,
            device=device,
            precision=precision,
            allow_random=allow_random,
            spread=True,  # a model too big for one GPU, over all of them
        )
        self.model: Any = loaded.model
        self.tokenizer, self.device, self.pad_id = loaded.tokenizer, loaded.device, loaded.pad_id
        self.input_device = loaded.input_device
        tokenizer = self.tokenizer
        self.prefix_id = tokenizer.bos_token_id
        if self.prefix_id is None:
            self.prefix_id = tokenizer.eos_token_id
        config = self.model.config
        lengths = [getattr(config, name, None) for name in POSITION_ATTRIBUTES]
        self.max_length = next((n for n in lengths if n), None) or DEFAULT_CONTEXT
        # transformers 5 renamed the cache argument and output from past_key_values to cache.
        parameters = inspect.signature(self.model.forward).parameters
        self.cache_name = "cache" if "cache" in parameters else "past_key_values"
        self.tokens = PromptTokens(
            tokenizer, seq2seq=seq2seq, prefix_id=self.prefix_id, max_length=self.max_length
        )

    # Tokens (evaluation/runners/prompt_tokens.py) -----------------------------------------

    def encode(self, text: str, special: bool | None = None) -> list[int]:
        return self.tokens.encode(text, special)

    def split(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        """(context ids, continuation ids), as the harness's loglikelihood requests have them."""
        return self.tokens.pairs([context], [[continuation]])[0][0]

    def units(self, contexts: Sequence[str], choices: Sequence[Sequence[str]]) -> list[Unit]:
        return self.tokens.units(contexts, choices)

    # Log-likelihoods ------------------------------------------------------------------------

    def loglikelihoods(
        self,
        contexts: Sequence[str],
        choices: Sequence[Sequence[str]],
        progress: Progress | None = None,
    ) -> list[list[float]]:
        """The log-likelihood of each choice after its example's context. The examples are
        tokenised CHUNK at a time on the preparing thread, while the device scores the chunk
        before; each chunk is sorted by length (longest first) and batched."""
        out = [[0.0] * len(options) for options in choices]

        def finish(batch: list[Unit], outputs: tuple[np.ndarray, ...]) -> None:
            scores = outputs[0]
            for row, unit in enumerate(batch):
                for k, choice in enumerate(unit.choices):
                    out[unit.example][choice] = float(scores[row, k])
            if progress:
                progress(sum(unit.last for unit in batch))

        readback = Readback(self.device, finish)
        score = self._seq2seq_scores if self.seq2seq else self._causal_scores
        starts = range(0, len(contexts), CHUNK)
        chunks = (partial(self._chunk, contexts, choices, start) for start in starts)
        with inference(self.device):
            for batches in ahead(chunks, depth=1):
                for batch, tensors in batches:
                    readback.add(batch, score(on_device(tensors, self.input_device)))
            readback.close()
        return out

    def _chunk(
        self, contexts: Sequence[str], choices: Sequence[Sequence[str]], start: int
    ) -> list[tuple[list[Unit], dict[str, Any]]]:
        """The batches of examples start.. start + CHUNK, as host tensors."""
        end = start + CHUNK
        units = self.units(contexts[start:end], choices[start:end])
        for unit in units:
            unit.example += start
        ordered = sorted(units, key=lambda unit: -len(unit.context))
        prepare = self._seq2seq_inputs if self.seq2seq else self._causal_inputs
        size = self.batch_size
        return [prepare(ordered[s : s + size]) for s in range(0, len(ordered), size)]

    def _causal_inputs(self, batch: list[Unit]) -> tuple[list[Unit], dict[str, Any]]:
        """Contexts padded on the left, so that every row's last context token is the last
        column; then, per row and choice, the continuation's tokens but the last (the inputs
        that predict tokens 2..n), padded on the right."""
        multiple = width_multiple(self.device)
        width = max(len(u.context) for u in batch)
        width = -(-width // multiple) * multiple
        ids = np.full((len(batch), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, unit in enumerate(batch):
            ids[row, width - len(unit.context) :] = unit.context
            mask[row, width - len(unit.context) :] = 1
        choices = max(len(u.continuations) for u in batch)
        tails = [
            unit.continuations[min(k, len(unit.continuations) - 1)]
            for unit in batch
            for k in range(choices)
        ]
        arrays = {
            "input_ids": ids,
            "attention_mask": mask,
            "position_ids": np.maximum(mask.cumsum(axis=1) - 1, 0),
            "targets": pad_rows(tails, 0),
            "target_mask": length_mask([len(t) for t in tails], max(map(len, tails))),
            "context_lengths": np.array([len(u.context) for u in batch], dtype=np.int64),
        }
        return batch, host_tensors(arrays, self.device)

    def _causal_scores(self, tensors: dict[str, Any]) -> Any:
        """(rows, choices) sums of log-probabilities: the first token from the context's last
        logits, the others from one pass over the choices with the context's cache."""
        import torch

        targets, target_mask = tensors["targets"], tensors["target_mask"]
        rows = tensors["input_ids"].shape[0]
        choices = targets.shape[0] // rows
        out = self.model(
            input_ids=tensors["input_ids"],
            attention_mask=tensors["attention_mask"],
            position_ids=tensors["position_ids"],
            use_cache=targets.shape[1] > 1,
            logits_to_keep=1,
        )
        first = torch.log_softmax(out.logits[:, -1].float(), dim=-1)
        first = first.repeat_interleave(choices, dim=0).gather(1, targets[:, :1])
        total = first[:, 0].double()
        if targets.shape[1] > 1:
            cache = getattr(out, self.cache_name)
            cache.batch_repeat_interleave(choices)
            inputs = targets[:, :-1]
            lengths = tensors["context_lengths"].repeat_interleave(choices)
            steps = torch.arange(inputs.shape[1], device=inputs.device)
            context_mask = tensors["attention_mask"].repeat_interleave(choices, dim=0)
            mask = torch.cat([context_mask, target_mask[:, :-1]], dim=1)
            logits = self.model(
                input_ids=inputs,
                attention_mask=mask,
                position_ids=lengths[:, None] + steps[None, :],
                use_cache=True,
                **{self.cache_name: cache},
            ).logits.float()
            picked = torch.log_softmax(logits, dim=-1).gather(-1, targets[:, 1:, None])[..., 0]
            total = total + torch.where(target_mask[:, 1:].bool(), picked.double(), 0.0).sum(1)
        return total.view(rows, choices)

    def _seq2seq_inputs(self, batch: list[Unit]) -> tuple[list[Unit], dict[str, Any]]:
        choices = max(len(u.continuations) for u in batch)
        tails = [
            unit.continuations[min(k, len(unit.continuations) - 1)]
            for unit in batch
            for k in range(choices)
        ]
        start = self.model.config.decoder_start_token_id
        if start is None:
            raise RunnerError("The model has no decoder_start_token_id.")
        multiple = width_multiple(self.device)
        arrays = {
            "input_ids": pad_rows([u.context for u in batch], self.pad_id, multiple),
            "targets": pad_rows(tails, 0),
            "decoder_input_ids": pad_rows([[start, *t[:-1]] for t in tails], self.pad_id),
            "target_mask": length_mask([len(t) for t in tails], max(map(len, tails))),
        }
        arrays["attention_mask"] = length_mask(
            [len(u.context) for u in batch], arrays["input_ids"].shape[1]
        )
        return batch, host_tensors(arrays, self.device)

    def _seq2seq_scores(self, tensors: dict[str, Any]) -> Any:
        """The encoder runs once per example; its output is repeated for each choice."""
        import torch

        targets, target_mask = tensors["targets"], tensors["target_mask"]
        rows = tensors["input_ids"].shape[0]
        choices = targets.shape[0] // rows
        encoded = self.model.get_encoder()(
            input_ids=tensors["input_ids"], attention_mask=tensors["attention_mask"]
        )
        encoded.last_hidden_state = encoded.last_hidden_state.repeat_interleave(choices, dim=0)
        logits = self.model(
            encoder_outputs=encoded,
            attention_mask=tensors["attention_mask"].repeat_interleave(choices, dim=0),
            decoder_input_ids=tensors["decoder_input_ids"],
            decoder_attention_mask=target_mask,
        ).logits.float()
        picked = torch.log_softmax(logits, dim=-1).gather(-1, targets[..., None])[..., 0]
        total = torch.where(target_mask.bool(), picked.double(), 0.0).sum(1)
        return total.view(rows, choices)

    # Generation -----------------------------------------------------------------------------

    def generate(
        self,
        contexts: Sequence[str],
        *,
        stop: Sequence[str],
        max_new_tokens: int,
        progress: Progress | None = None,
    ) -> list[str]:
        """Greedy continuations of each context, cut before the first stop sequence."""
        import torch

        tokens = self.tokens.encode_many(c for c in contexts if c)
        encoded = [tokens[c] if c else [self.prefix_id] for c in contexts]
        keep = self.max_length - max_new_tokens
        if not self.seq2seq and keep < 1:
            raise RunnerError(f"max_new_tokens must be below the model's {self.max_length}.")
        encoded = [ids if self.seq2seq else ids[-keep:] for ids in encoded]
        order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
        out = [""] * len(encoded)
        with inference(self.device):
            for first in range(0, len(order), self.batch_size):
                rows = order[first : first + self.batch_size]
                width = max(len(encoded[i]) for i in rows)
                ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
                mask = torch.zeros((len(rows), width), dtype=torch.long)
                for row, i in enumerate(rows):  # causal models continue from the right edge
                    if self.seq2seq:
                        ids[row, : len(encoded[i])] = torch.tensor(encoded[i])
                        mask[row, : len(encoded[i])] = 1
                    else:
                        ids[row, width - len(encoded[i]) :] = torch.tensor(encoded[i])
                        mask[row, width - len(encoded[i]) :] = 1
                generated = self.model.generate(
                    input_ids=ids.to(self.input_device),
                    attention_mask=mask.to(self.input_device),
                    do_sample=False,
                    num_beams=1,
                    max_new_tokens=max_new_tokens,
                    pad_token_id=self.pad_id,
                )
                new = generated if self.seq2seq else generated[:, width:]
                for row, i in enumerate(rows):
                    text = str(self.tokenizer.decode(new[row].tolist(), skip_special_tokens=True))
                    out[i] = cut(text, stop)
                if progress:
                    progress(len(rows))
        return out


def cut(text: str, stop: Sequence[str]) -> str:
    """The text before the first stop sequence, as the harness's generate_until does."""
    for sequence in stop:
        if sequence:
            text = text.split(sequence)[0]
    return text
