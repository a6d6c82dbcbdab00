"""What people type and upload, read strictly: database ids (in URLs, query strings and forms)
and JSON. PostgreSQL refuses integers past its range and NUL characters in text, and Python's
JSON reader accepts NaN, repeated keys and deep nesting; each would otherwise surface as a 500
or a silent loss."""

import json
import math
from typing import Any

from rest_framework.settings import api_settings

MAX_ID = 2**63 - 1  # PostgreSQL bigint


def json_only() -> list[Any]:
    """The API's JSON parser alone (REST_FRAMEWORK's first), for a view whose body is nested
    JSON: a form could not carry it, and a form without a boolean reads as false."""
    return list(api_settings.DEFAULT_PARSER_CLASSES[:1])


MAX_JSON_DEPTH = 64


class IdConverter:
    """A database id in a URL: 1 to 18 digits, so that it always fits a bigint."""

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


def parse_id(value: Any) -> int | None:
    """An id typed into a query string or a form: the number, or None if it is not one."""
    text = str(value or "")
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else None


def strict_json_loads(text: str | bytes) -> Any:
    """json.loads without NaN or Infinity (not JSON, and refused by PostgreSQL's jsonb), numbers
    too large for a float (1e400 would become infinity), or a key repeated in one object (JSON
    leaves it undefined; Python would keep the last silently), and with a ValueError instead of
    a RecursionError on absurd nesting."""

    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not a JSON number")

    def finite(number: str) -> float:
        value = float(number)
        if not math.isfinite(value):
            raise ValueError(f"the number {number[:40]} is too large")
        return value

    def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        value = dict(pairs)
        if len(value) < len(pairs):
            keys = [key for key, _ in pairs]
            repeated = next(key for n, key in enumerate(keys) if key in keys[:n])
            raise ValueError(f"the key {repeated[:60]!r} appears twice in one object")
        return value

    try:
        value = json.loads(
            text, parse_constant=refuse, parse_float=finite, object_pairs_hook=unique_keys
        )
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None
    if _depth(value) > MAX_JSON_DEPTH:
        raise ValueError(f"the JSON is nested deeper than {MAX_JSON_DEPTH} levels")
    if _has_nul(value):
        raise ValueError("text may not contain NUL characters (\\u0000)")
    return value


def _depth(value: Any) -> int:
    depth, level = 0, [value]
    while level:
        depth += 1
        level = [
            child
            for item in level
            if isinstance(item, dict | list)
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, dict | list)
        ]
    return depth


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False
