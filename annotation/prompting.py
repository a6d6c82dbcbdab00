"""Prompts (docs/prompting.md): the one place where a prompt is checked, chosen and rendered, for
the Prompt page, evaluation runs, minimal pairs and the lm-eval export alike.

A prompt is a template over an example's fields: plain `{field}` placeholders and `{{ }}` for
literal braces, never a format string. The prompt and verbalizers a model reads are the
project's, each overridden by the model's own where it sets one (`Prompting.of`). A context is
the rendered prompt after k shots drawn from a pool the caller passes in.
"""

import functools
import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from annotation.errors import DomainError

MAX_PROMPT = 4000
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")  # a field's name
FEW_SHOT_SEED = 1234
SHOT_DELIMITER = "\n\n"


def default_prompt(task_type: str, field_names: list[str]) -> str:
    """The prompt of a project that sets none: each field on its line, then "Answer:"; for
    minimal pairs, the source on its line (the text is scored after it)."""
    if task_type == "minimal_pair":
        return "{source}\n"
    return "".join(f"{name}: {{{name}}}\n" for name in field_names) + "Answer:"


def _prompt_parts(prompt: str) -> list[tuple[str, str | None, str | None, str | None]]:
    try:
        return list(string.Formatter().parse(prompt))
    except ValueError as error:
        raise DomainError(f"prompt: {error} (write {{{{ and }}}} for literal braces).") from None


def prompt_placeholders(prompt: str) -> list[str]:
    """The fields a prompt names, or a DomainError naming the placeholder that is not a plain
    {field}: no conversion (!r), no format (:>10), no attribute or index (docs/prompting.md)."""
    names = []
    for _, name, spec, conversion in _prompt_parts(prompt):
        if name is None:
            continue
        written = (
            "{"
            + name
            + (f"!{conversion}" if conversion else "")
            + (f":{spec}" if spec else "")
            + "}"
        )
        if spec or conversion or not NAME_RE.match(name):
            raise DomainError(
                f"prompt: {written} is not a plain placeholder; write a field's name in braces, "
                "such as {text}, with nothing else inside."
            )
        names.append(name)
    return names


def render_prompt(prompt: str, fields: dict[str, Any]) -> str:
    """The prompt with each {field} replaced by its text ("" where a row lacks it), and {{ }}
    as literal braces. Never str.format: a stored prompt cannot convert, pad or index, so the
    text is the prompt's and the fields' size, whatever was saved before placeholders were
    checked."""
    parts = _parts(prompt)
    if parts is None:  # unbalanced braces saved before they were checked: the prompt as is
        return prompt
    return "".join(literal + _value(fields, name) for literal, name in parts)


def render_prompt_head(prompt: str, fields: dict[str, Any], limit: int) -> tuple[str, int]:
    """The first `limit` characters of render_prompt(prompt, fields), and the length of the
    whole, without building the whole: a prompt of 4,000 characters that repeats a long field
    renders to millions (the Prompt page's preview)."""
    parts = _parts(prompt)
    pieces = [prompt]
    if parts is not None:
        pieces = [text for literal, name in parts for text in (literal, _value(fields, name))]
    head, length = [], 0
    for piece in pieces:
        if length < limit:
            head.append(piece[: limit - length])
        length += len(piece)
    return "".join(head), length


def _value(fields: dict[str, Any], name: str | None) -> str:
    return "" if name is None else str(fields.get(name, ""))


def check_prompt_length(example_id: Any, length: int) -> None:
    """Runs refuse a context above PROMPT_MAX_CHARS, naming the example."""
    if length > settings.PROMPT_MAX_CHARS:
        raise DomainError(
            f"The prompt of example {example_id} is {length:,} characters, above "
            f"PROMPT_MAX_CHARS ({settings.PROMPT_MAX_CHARS:,}): shorten the prompt, ask "
            "for fewer shots, or raise the limit on the workers."
        )


@functools.lru_cache(maxsize=64)
def _parts(prompt: str) -> tuple[tuple[str, str | None], ...] | None:
    """The prompt's literal texts and field names, parsed once: a release renders it for each
    of its examples."""
    try:
        return tuple((literal, name) for literal, name, _, _ in _prompt_parts(prompt))
    except DomainError:
        return None


def clean_prompt(prompt: Any, field_names: list[str] | None = None) -> str:
    """A prompt is a template over fields (docs/prompting.md): every placeholder a field."""
    if not isinstance(prompt, str) or len(prompt) > MAX_PROMPT:
        raise DomainError(f"prompt must be text of at most {MAX_PROMPT} characters.")
    names = prompt_placeholders(prompt)
    if field_names is not None:
        unknown = sorted(set(names) - set(field_names))
        if unknown:
            raise DomainError(
                f"prompt names {', '.join('{' + n + '}' for n in unknown)}, which are not "
                f"fields (fields: {', '.join(field_names)})."
            )
    return prompt


def clean_verbalizers(verbalizers: Any, labels: list[str] | None = None) -> dict[str, str]:
    """Label -> the words a language model is scored on for it."""
    if not isinstance(verbalizers, dict) or not all(
        isinstance(v, str) and v.strip() and len(v) <= 200 for v in verbalizers.values()
    ):
        raise DomainError("verbalizers must map labels to non-empty words.")
    if labels is not None:
        unknown = sorted(set(verbalizers) - set(labels))
        if unknown:
            raise DomainError(
                f"verbalizers name {', '.join(unknown)}, which are not labels "
                f"(labels: {', '.join(labels)})."
            )
        words = [verbalizers.get(label, label) for label in labels]
        if len(set(words)) < len(words):
            raise DomainError("verbalizers: two labels may not share a word.")
    return verbalizers


def prompt_fields(task_type: str, field_names: list[str]) -> list[str]:
    """What a prompt may name: the fields; for minimal pairs, only the source (the text is
    what is scored after it)."""
    if task_type == "minimal_pair":
        return [name for name in field_names if name == "source"]
    return field_names


def check_prompting(
    task_type: str, values: dict[str, Any], field_names: list[str], labels: list[str]
) -> None:
    """A project's prompt and verbalizers (its settings), against its fields and labels."""
    clean_prompt(values.get("prompt", ""), prompt_fields(task_type, field_names))
    clean_verbalizers(values.get("verbalizers", {}), labels)


@dataclass(frozen=True)
class Prompting:
    """The prompt and the verbalizers (a word per label, in the project's order) one model
    reads a project's examples through."""

    prompt: str
    labels: tuple[str, ...]
    words: tuple[str, ...]

    @classmethod
    def of(cls, project: Any, prompt: str = "", verbalizers: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
        """The project's, each overridden by a model's own `prompt` and `verbalizers`."""
        words = {**project.setting("verbalizers"), **(verbalizers or {})}
        return cls(
            prompt=prompt or project.prompt,
            labels=tuple(project.labels),
            words=tuple(words.get(label, label) for label in project.labels),
        )

    @property
    def word_of(self) -> dict[str, str]:
        return dict(zip(self.labels, self.words, strict=True))

    def render(self, fields: dict[str, Any]) -> str:
        return render_prompt(self.prompt, fields)

    def over_source(self, source: str | None) -> str:
        """Minimal pairs: the prompt over the pair's source; nothing where it has none."""
        return self.render({"source": source}) if source else ""

    def contexts(
        self,
        examples: list[dict[str, Any]],
        answer: Callable[[dict[str, Any]], str],
        *,
        shots: int = 0,
        pool: list[dict[str, Any]] = (),  # type: ignore[assignment]
        delimiter: str = " ",
    ) -> list[str]:
        """Each example's context: `shots` examples of `pool` (each rendered, `delimiter` and
        its answer), then the example's rendered prompt, joined by a blank line. The shots are
        drawn by a generator seeded with the example's id: the same on every run. Refused
        above PROMPT_MAX_CHARS, naming the example."""
        out = []
        for example in examples:
            parts = []
            if shots and pool:
                rng = random.Random(f"{FEW_SHOT_SEED}:{example['id']}")
                drawn = rng.sample(pool, min(shots, len(pool)))
                parts = [self.render(s["fields"]) + delimiter + answer(s) for s in drawn]
            text = SHOT_DELIMITER.join([*parts, self.render(example["fields"])])
            check_prompt_length(example["id"], len(text))
            out.append(text)
        return out
