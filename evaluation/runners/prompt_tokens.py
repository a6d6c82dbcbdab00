"""A prompted model's tokens, as lm-evaluation-harness's `hf` backend makes them
(docs/prompting.md), tokenised in batches: each distinct text once, in one call to the
tokenizer per kind of text (issue 46: one text at a time, tokenising was 55-80% of the
runner's time on an H100).

- `encode(text)` is `tokenizer.encode(text)` with the tokenizer's own special tokens (a BOS
  only if the tokenizer adds one itself; none if the text already starts with it).
- Trailing spaces of the context move to the start of the continuation. Causal models: the
  continuation's tokens are the tail of `encode(context + continuation)` after
  `encode(context)`. Seq2seq models: the encoder reads `encode(context)`, and the decoder is
  scored on `encode(continuation)` without special tokens. An empty context is the prefix
  token (BOS, else EOS), or the continuation's first token when that is the prefix.
- Contexts longer than the model's input are cut on the left.

A batched call gives the ids of one call per text, for fast and slow tokenizers alike
(tests/evaluation/runners/test_prompt_tokens.py holds them to the harness's own split).
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from evaluation.runners.base import RunnerError

Pair = tuple[list[int], list[int]]  # (context ids, continuation ids)


@dataclass
class Unit:
    """One context and the continuations scored after it (usually one example's choices)."""

    example: int
    context: list[int]
    continuations: list[list[int]]
    choices: list[int]  # which choice of the example each continuation is
    last: bool  # the example's last unit


class PromptTokens:
    def __init__(self, tokenizer: Any, *, seq2seq: bool, prefix_id: int, max_length: int):
        self.tokenizer = tokenizer
        self.seq2seq = seq2seq
        self.prefix_id = prefix_id
        self.max_length = max_length
        bos = tokenizer.bos_token_id
        self.bos_text = str(tokenizer.decode([bos])) if bos is not None else ""

    def special(self, text: str, special: bool | None) -> bool:
        """Whether `text` gets the tokenizer's special tokens: not when it starts with BOS."""
        if special is None:
            return not (self.bos_text and text.startswith(self.bos_text))
        return special

    def encode(self, text: str, special: bool | None = None) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=self.special(text, special)))

    def encode_many(
        self, texts: Iterable[str], special: bool | None = None
    ) -> dict[str, list[int]]:
        """Each distinct text's `encode(text, special)`, in one batched call per setting of the
        special tokens (one, unless some texts start with BOS)."""
        by_setting: dict[bool, list[str]] = {}
        for text in dict.fromkeys(texts):
            by_setting.setdefault(self.special(text, special), []).append(text)
        out: dict[str, list[int]] = {}
        for setting, batch in by_setting.items():
            ids = self.tokenizer(
                batch,
                add_special_tokens=setting,
                return_attention_mask=False,
                return_token_type_ids=False,
            )["input_ids"]
            out.update(zip(batch, map(list, ids), strict=True))
        return out

    def pairs(self, contexts: Sequence[str], choices: Sequence[Sequence[str]]) -> list[list[Pair]]:
        """(context ids, continuation ids) of each example's choices, as the harness's
        loglikelihood requests have them."""
        kept = [context.rstrip() for context in contexts]
        present = [i for i, context in enumerate(contexts) if context]
        empty = [i for i, context in enumerate(contexts) if not context]
        heads = self.encode_many(kept[i] for i in present)
        if self.seq2seq:  # the continuation alone, with the context's trailing spaces
            rests = self.encode_many(
                (contexts[i][len(kept[i]) :] + o for i in present for o in choices[i]), False
            )
        else:  # context + spaces + continuation, whole
            rests = self.encode_many(contexts[i] + o for i in present for o in choices[i])
        alone = self.encode_many((o for i in empty for o in choices[i]), False)
        out = []
        for context, head_text, options in zip(contexts, kept, choices, strict=True):
            if not context:
                out.append([self._after_prefix(alone[option]) for option in options])
            elif self.seq2seq:
                spaces = context[len(head_text) :]
                out.append([(heads[head_text], rests[spaces + o]) for o in options])
            else:
                head = heads[head_text]
                out.append([(head, rests[context + o][len(head) :]) for o in options])
        return out

    def _after_prefix(self, ids: list[int]) -> Pair:
        if ids and ids[0] == self.prefix_id:
            return ids[:1], ids[1:]
        return [self.prefix_id], ids

    def units(self, contexts: Sequence[str], choices: Sequence[Sequence[str]]) -> list[Unit]:
        """The work for scoring `choices[i]` after `contexts[i]`: one unit per distinct context
        tokens (one per example), its context cut on the left to fit the model with its longest
        continuation."""
        out: list[Unit] = []
        pairs = self.pairs(contexts, choices)
        for example, (options, split) in enumerate(zip(choices, pairs, strict=True)):
            groups: dict[tuple[int, ...], Unit] = {}
            for choice, (option, (head, tail)) in enumerate(zip(options, split, strict=True)):
                if not tail:
                    raise RunnerError(f"The choice {option!r} has no tokens after the prompt.")
                unit = groups.setdefault(tuple(head), Unit(example, head, [], [], False))
                unit.continuations.append(tail)
                unit.choices.append(choice)
            units = list(groups.values())
            units[-1].last = True
            for unit in units:
                longest = max(map(len, unit.continuations))
                keep = self.max_length + 1 - longest  # the input holds at most max_length
                if len(unit.context) > keep:
                    unit.context = unit.context[len(unit.context) - max(keep, 1) :]
            out.extend(units)
        return out
