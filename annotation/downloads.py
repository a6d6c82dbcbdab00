"""Tables people download (a run's predictions, a project's votes) as JSON Lines or CSV,
streamed row by row. In CSV, lists and objects are JSON text in their cell, a cell holding a line
break is quoted, and a cell or a line of it that starts like a formula is escaped
(annotation.text.cells.csv_line, docs/formats.md)."""

import json
from collections.abc import Iterable, Iterator
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

from annotation.errors import DomainError
from annotation.text.cells import csv_line

FORMATS = {"jsonl": "application/x-ndjson", "csv": "text/csv"}
# A download endpoint's OpenAPI: its format parameter, and its answers.
FORMAT_PARAMETER = OpenApiParameter("format", enum=list(FORMATS), default="jsonl")
RESPONSES = {(200, content_type): OpenApiTypes.STR for content_type in FORMATS.values()}


def checked_format(value: str | None) -> str:
    fmt = value or "jsonl"
    if fmt not in FORMATS:
        raise DomainError("format is jsonl or csv.", field="format")
    return fmt


def lines(rows: Iterable[dict[str, Any]], fmt: str) -> Iterator[str]:
    if fmt == "jsonl":
        yield from (json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in rows)
        return
    for n, row in enumerate(rows):
        if n == 0:
            yield csv_line(row.keys())
        yield csv_line([_cell(value) for value in row.values()])


def download(rows: Iterable[dict[str, Any]], fmt: str, name: str) -> StreamingHttpResponse:
    """An attachment named `name`.{fmt}, written as it is sent."""
    response = StreamingHttpResponse(
        lines(rows, fmt), content_type=f"{FORMATS[fmt]}; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
