"""A project's audit log as people download it (one row per action, oldest first), and each
entry's details in words, as the audit page shows them."""

from collections.abc import Iterator
from typing import Any

from annotation.models import Project


def audit_rows(project: Project) -> Iterator[dict[str, Any]]:
    log = project.audit_log.order_by("created_at", "id").values_list(
        "created_at", "actor__username", "action", "details"
    )
    for at, actor, action, details in log.iterator(chunk_size=2000):
        yield {"at": at.isoformat(), "actor": actor or "", "action": action, "details": details}


LONGEST_LIST = 5  # a longer list is told by its length: "243 items"
LONGEST_TEXT = 120


def details_in_words(details: dict[str, Any]) -> list[str]:
    """An entry's details as lines a person reads: `key: value` in words, a change as
    `key: old → new` (a setting's under its own name), a long list as its length, never a
    Python dump. The download keeps the details as recorded."""
    lines = []
    for key, value in sorted(details.items()):
        if isinstance(value, dict) and value and all(_is_change(v) for v in value.values()):
            lines += [f"{name}: {in_words(change)}" for name, change in value.items()]
        else:
            lines.append(f"{key}: {in_words(value)}")
    return lines


def in_words(value: Any) -> str:
    """One detail's value: none, yes or no, a number, a text (long ones cut), a short list
    joined, a long one counted, a change as old → new, a mapping as `key: value` pairs."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        if not value:
            return "none"
        if len(value) > LONGEST_LIST or any(isinstance(v, list | dict) for v in value):
            return f"{len(value)} item{'s' if len(value) != 1 else ''}"
        return ", ".join(in_words(v) for v in value)
    if _is_change(value):
        return f"{in_words(value['from'])} → {in_words(value['to'])}"
    if isinstance(value, dict):
        if len(value) > LONGEST_LIST:
            return f"{len(value)} values"
        return "; ".join(f"{k}: {in_words(v)}" for k, v in value.items()) or "none"
    text = str(value)
    return text if len(text) <= LONGEST_TEXT else text[: LONGEST_TEXT - 1] + "…"


def _is_change(value: Any) -> bool:
    return isinstance(value, dict) and value.keys() == {"from", "to"}
