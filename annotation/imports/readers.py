"""Readers shared by every import (docs/workflows.md): bytes to text within the limits, then JSONL,
CSV or TSV records, each with its line number. Any problem is a LineError."""

import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import PurePath
from typing import Any

import orjson
from django.conf import settings

from annotation.errors import ImportRejected, LineError
from annotation.text.cells import from_spreadsheet_cell
from annotation.text.parsing import MAX_JSON_DEPTH, strict_json_loads

FORMATS = ("jsonl", "csv", "tsv")

MAX_ID_CHARS = 255  # the id columns' length


def text_problem(value: Any, what: str) -> str | None:
    """What is wrong with a text field of any import (originals, sets, votes), or None."""
    if value is None:
        return f"missing {what}."
    if not isinstance(value, str):
        return f"{what} must be text."
    if not value or value.isspace():  # value.strip() would copy a review to find out
        return f"{what} is empty."
    limit = settings.IMPORT_MAX_FIELD_CHARS
    if len(value) > limit:
        return f"{what} has {len(value):,} characters; the limit is {limit:,}."
    return None


def field_problem(project: Any, fields: dict[str, Any], name: str, what: str) -> str | None:
    """text_problem of one field of a row, where a field the project makes optional (a minimal
    pair's source) may be missing or empty: the one field rule of every import."""
    value = fields.get(name)
    if (value is None or value == "") and name in project.optional_field_names:
        return None
    return text_problem(value, what)


def resolve_label(value: str, labels: list[str], label_map: dict[str, str]) -> str | None:
    """The project label an imported value means, the one rule of every import and every
    published dataset: whitespace collapsed (MC-TACO's "no ", MATRES's "after "), then through
    `label_map` ({"Negative": "negative"}), exactly, or case-insensitively when only one label
    matches; else None."""
    value = " ".join(value.split())
    value = label_map.get(value, label_map.get(value.casefold(), value))
    if value in labels:
        return value
    folded = [label for label in labels if label.casefold() == value.casefold()]
    return folded[0] if len(folded) == 1 else None


def id_problem(value: str, what: str = "id") -> str | None:
    """What is wrong with an id of any import, or None."""
    if not value:
        return f"{what} is empty."
    if len(value) > MAX_ID_CHARS:
        return f"{what} is longer than {MAX_ID_CHARS} characters."
    return None


def over_row_limit(line: int, rows: int) -> LineError | None:
    """The error for a file whose `rows`-th row, on `line`, is past IMPORT_MAX_ROWS."""
    limit = settings.IMPORT_MAX_ROWS
    return (
        LineError(line, f"more than {limit:,} rows; that is the limit.") if rows > limit else None
    )


def guess_format(filename: str) -> str:
    suffix = PurePath(filename).suffix.lower().lstrip(".")
    return {"json": "jsonl", "ndjson": "jsonl", "txt": "tsv"}.get(suffix, suffix)


def decode(data: bytes) -> str:
    """UTF-8 text, or a rejection naming the line with the bad bytes."""
    max_bytes = settings.IMPORT_MAX_BYTES
    if len(data) > max_bytes:
        raise ImportRejected(
            [
                LineError(
                    None, f"the file is {_mb(len(data))}; the upload limit is {_mb(max_bytes)}."
                )
            ]
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ImportRejected(
            [LineError(line, f"bad encoding: byte 0x{data[error.start]:02x} is not UTF-8.")]
        ) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise ImportRejected([LineError(line, "the line holds a NUL character (\\x00).")])
    return text


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


_BETWEEN = re.compile(r"[\s,]*")


def read_json_array(text: str) -> Iterator[tuple[int, dict[str, Any] | LineError]]:
    """A JSON document that is one array of objects, each read with the line it starts on."""
    try:
        records = strict_json_loads(text)
    except json.JSONDecodeError as error:
        yield (
            error.lineno,
            LineError(error.lineno, f"invalid JSON: {error.msg} (column {error.colno})."),
        )
        return
    except ValueError as error:
        yield 1, LineError(1, f"invalid JSON: {error}.")
        return
    if not isinstance(records, list):
        yield (
            1,
            LineError(1, "the file must hold one JSON object per line, or one array of objects."),
        )
        return
    decoder, at = json.JSONDecoder(), text.index("[") + 1
    line_no, counted = 1, 0
    for n, record in enumerate(records, start=1):
        at = _BETWEEN.match(text, at).end()  # type: ignore[union-attr]  # always matches
        line_no, counted = line_no + text.count("\n", counted, at), at
        at = decoder.raw_decode(text, at)[1]
        if not isinstance(record, dict):
            yield line_no, LineError(line_no, f"element {n} of the array is not a JSON object.")
            continue
        yield line_no, record


def json_line(line: str) -> Any:
    """strict_json_loads(line), through orjson (a fifth of the time) where the two read the
    line alike. orjson refuses what strict_json_loads refuses but for a key repeated in one
    object (kept once: it counts fewer colons), a NUL written \\u0000, nesting deeper than
    MAX_JSON_DEPTH and integers past 64 bits (read as floats, written back with "e+"); any of
    these, or a doubt, and strict_json_loads reads the line, with its own message."""
    if "\\u0000" in line or "\\u003" in line or line.count("{") + line.count("[") > MAX_JSON_DEPTH:
        return strict_json_loads(line)  # a NUL, or a colon (\\u003a) its count would miss
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return strict_json_loads(line)
    written = orjson.dumps(value)
    if written.count(b":") != line.count(":") or b"e+" in written:
        return strict_json_loads(line)
    return value


def read_jsonl(text: str) -> Iterator[tuple[int, dict[str, Any] | LineError]]:
    """JSON Lines: lines end at "\\n" only (U+2028 and friends may stand inside strings); or, when
    the file opens with "[", one JSON array of objects (read_json_array)."""
    if text.lstrip().startswith("["):
        yield from read_json_array(text)
        return
    for line_no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json_line(line)
        except json.JSONDecodeError as error:
            yield line_no, LineError(line_no, f"invalid JSON: {error.msg} (column {error.colno}).")
            continue
        except ValueError as error:
            yield line_no, LineError(line_no, f"invalid JSON: {error}.")
            continue
        if not isinstance(record, dict):
            yield line_no, LineError(line_no, "each line must be a JSON object.")
            continue
        yield line_no, record


def read_delimited(text: str, delimiter: str) -> Iterator[tuple[int, dict[str, Any] | LineError]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    start = 1
    try:
        for row in reader:
            line_no, start = start, reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if header is None:
                header = [cell.strip() for cell in row]
                repeated = sorted({c for c in header if header.count(c) > 1})
                if repeated:
                    yield line_no, LineError(line_no, f"header repeats {', '.join(repeated)}.")
                    return
                continue
            if len(row) != len(header):
                yield (
                    line_no,
                    LineError(
                        line_no,
                        f"expected {len(header)} columns as in the header, found {len(row)}.",
                    ),
                )
                continue
            cells = [from_spreadsheet_cell(cell) for cell in row]
            yield line_no, dict(zip(header, cells, strict=True))
    except csv.Error as error:
        kind = "TSV" if delimiter == "\t" else "CSV"
        yield start, LineError(start, f"malformed {kind}: {error}.")


def read_rows(text: str, fmt: str) -> Iterator[tuple[int, dict[str, Any] | LineError]]:
    if fmt == "jsonl":
        return read_jsonl(text)
    return read_delimited(text, "\t" if fmt == "tsv" else ",")
