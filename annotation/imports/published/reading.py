"""What every reader of a published contrast set shares (docs/published/). A reader turns the
dataset's files, in the order its repository names them (the originals first), into sets as the
dataset's own evaluation script pairs them, with every published id kept. Problems name the file
and the line, or the published id where the file is one JSON document.

A reader returns (sets, notes, problems): notes say what the official script also leaves out
(e.g. PERSPECTRUM's rows whose original stance is "unk"), or what the import keeps otherwise
than the file writes it (a set_checks.Warned for each, kept among the batch's warnings, as
Quoref's repeated ids renamed <id>-2); problems are every row-level problem
of the files, which the import reports together with its own (a file of the wrong shape is
refused at once). Labels are kept as the file writes them: the import resolves them by the one
rule of every import (readers.resolve_label).
"""

import re
from collections.abc import Sequence
from typing import Any

from annotation.errors import ImportRejected, LineError
from annotation.imports.paired import ParsedSet
from annotation.imports.readers import decode, read_delimited
from annotation.text.parsing import strict_json_loads

Files = list[tuple[str, bytes]]  # (name, contents), in the dataset's order
# sets, notes, problems; a note that is a Warned is a warning of the batch, one that is
# another LineError a row left out ("where: why"), kept on the batch as a skipped line
Read = tuple[list[ParsedSet], Sequence[str | LineError], list[LineError]]
Rows = list[tuple[int, dict[str, str]]]  # a table's rows, each with its line
TAG = "gardner-2020"  # the tag of perturbations whose dataset names no phenomenon


class Problems:
    """Every problem of one import, each with its file, raised together at the end."""

    def __init__(self) -> None:
        self.errors: list[LineError] = []

    def add(self, name: str, line: int | None, message: str) -> None:
        self.errors.append(LineError(line, f"{name}: {message}"))

    def raise_any(self) -> None:
        if self.errors:
            raise ImportRejected(self.errors)


def refuse(message: str) -> ImportRejected:
    """A file of the wrong shape, refused whole with one message."""
    return ImportRejected([LineError(None, message)])


def expect(files: Files, count: int, names: str) -> None:
    if len(files) != count:
        raise refuse(f"this dataset comes in {count} file(s): {names}; got {len(files)}.")


def text_of(value: Any) -> str:
    """A published value as text: None is empty, numbers are written out."""
    return value if isinstance(value, str) else "" if value is None else str(value)


def same_text(first: str, second: str) -> bool:
    """Two published texts that differ in whitespace alone are the same row (MATRES's
    "led byWen" and "led by Wen")."""
    return "".join(first.split()) == "".join(second.split())


def perturbation(
    pid: str, fields: dict[str, str], truth: Any, where: str, tags: list[str] | None = None
) -> dict[str, Any]:
    """A perturbation as import_sets takes it: a label (text) or answers (a list)."""
    key = "label" if isinstance(truth, str) else "answers"
    other: dict[str, Any] = {"answers": []} if key == "label" else {"label": ""}
    return {"id": pid, "fields": fields, key: truth, **other, "tags": tags or [TAG], "where": where}


def read_json(name: str, data: bytes) -> Any:
    try:
        return strict_json_loads(decode(data))
    except ValueError as error:
        raise refuse(f"{name}: not a JSON document ({error}).") from None


def objects(value: Any, where: str, problems: list[str]) -> list[tuple[int, dict[str, Any]]]:
    """The objects of a JSON list, each with its position; anything else is a problem."""
    if value is None:
        return []
    if not isinstance(value, list):
        problems.append(f"{where}: expected a list.")
        return []
    out = []
    for n, item in enumerate(value):
        if isinstance(item, dict):
            out.append((n, item))
        else:
            problems.append(f"{where}[{n}]: expected an object.")
    return out


def id_lines(data: bytes, key: str = "id") -> dict[str, list[int]]:
    """The line of each `"<key>": "…"` of a JSON document laid out over lines, by id, in the
    file's order (an id the file repeats has several); {} for a document on one line, where a
    line number would say nothing."""
    text = decode(data)
    if text.count("\n") < 2:
        return {}
    found = re.compile(rf'"{re.escape(key)}"\s*:\s*"([^"\\]*)"')
    lines: dict[str, list[int]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        for match in found.finditer(line):
            lines.setdefault(match.group(1), []).append(n)
    return lines


def table(name: str, data: bytes, delimiter: str, columns: set[str], problems: Problems) -> Rows:
    """The rows of a CSV or TSV file with its header, each with its line number."""
    rows = []
    for line, row in read_delimited(decode(data), delimiter):
        if isinstance(row, LineError):
            problems.add(name, row.line, row.message)
        elif missing := sorted(columns - set(row)):
            problems.add(name, 1, f"the header lacks {', '.join(missing)}.")
            break
        else:
            rows.append((line, row))
    return rows
