"""Import of originals (docs/workflows.md): readers, then row parsing, then one atomic insert.

Every problem is reported with the line it is on, and any problem rejects the whole file.
"""

import contextlib
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from django.db import IntegrityError, transaction

from annotation.bulk import BATCH, analyze, immediate_constraints, insert_rows, present_values
from annotation.data.tasks import index_later
from annotation.errors import ImportRejected
from annotation.imports.readers import (
    FORMATS,
    LineError,
    decode,
    field_problem,
    guess_format,
    id_problem,
    over_row_limit,
    read_rows,
    resolve_label,
)
from annotation.models import AuditLog, Example, ImportBatch, Project, user_or_none
from annotation.models.config import SPLITS
from annotation.text.answers import AnswerRules, clean_answers
from annotation.text.parsing import strict_json_loads

Progress = Callable[[str, int, int], None]


@dataclass
class ParsedRow:
    line: int | None  # None in a published JSON document, which names its sets by id
    external_id: str
    fields: dict[str, str]
    label: str
    split: str
    metadata: dict[str, Any] = field(default_factory=dict)
    answers: list[Any] = field(default_factory=list)  # texts, or lists of spans


class RowParser:
    """Turns raw records into ParsedRows for one project, collecting line-numbered errors."""

    def __init__(
        self,
        project: Project,
        mapping: dict[str, str],
        default_split: str,
        id_prefix: str,
        label_map: dict[str, str] | None = None,
    ):
        self.project = project
        self.label_map = label_map or {}
        self.mapping = mapping
        self.default_split = default_split
        self.id_prefix = id_prefix
        self.first_seen: dict[str, int] = {}
        self.truth = "answers" if project.is_free_text else "label"
        self.mapped_sources = {
            self.source(t) for t in [*project.field_names, "id", self.truth, "split"]
        }

    def source(self, target: str) -> str:
        return self.mapping.get(target, target)

    def parse(self, line: int, record: dict[str, Any]) -> ParsedRow | list[LineError]:
        errors: list[LineError] = []
        fields: dict[str, str] = {}
        for name in self.project.field_names:
            value = record.get(self.source(name))
            problem = field_problem(self.project, {name: value}, name, f"field {self._named(name)}")
            if problem:
                errors.append(LineError(line, problem))
            else:
                fields[name] = "" if value is None else str(value)
        label, answers = "", []
        if self.project.is_free_text:
            answers = self._answers(line, record.get(self.source("answers")), errors)
        else:
            label = self._label(line, record.get(self.source("label")), errors)
        split = self._split(line, record.get(self.source("split")), errors)
        external_id = self._external_id(line, record.get(self.source("id")), errors)
        if errors:
            return errors
        metadata = {k: v for k, v in record.items() if k not in self.mapped_sources}
        if isinstance(metadata.get("metadata"), dict):
            metadata = {**metadata.pop("metadata"), **metadata}
        return ParsedRow(line, external_id, fields, label, split, metadata, answers)

    def _named(self, name: str) -> str:
        source = self.source(name)
        return repr(name) if source == name else f"{name!r} (column {source!r})"

    def _label(self, line: int, value: Any, errors: list[LineError]) -> str:
        if value is None or str(value).strip() == "":
            errors.append(LineError(line, f"missing label {self._named('label')}."))
            return ""
        label = resolve_label(str(value).strip(), self.project.labels, self.label_map)
        if label is None:
            errors.append(
                LineError(
                    line,
                    f"unknown label {str(value).strip()!r}; the project's labels are "
                    f"{', '.join(self.project.labels)} (map others with labels).",
                )
            )
            return ""
        return label

    def _answers(self, line: int, value: Any, errors: list[LineError]) -> list[Any]:
        """A JSON list of answers; a CSV cell holds one answer, or a JSON list of them."""
        if isinstance(value, str) and value.lstrip().startswith("["):
            with contextlib.suppress(ValueError):
                value = strict_json_loads(value)
        rules = AnswerRules.of(self.project)
        answers = clean_answers(value, rules) if value is not None else "missing answers."
        if isinstance(answers, str):
            errors.append(LineError(line, f"{self._named('answers')}: {answers}"))
            return []
        return answers

    def _split(self, line: int, value: Any, errors: list[LineError]) -> str:
        if value is None or str(value).strip() == "":
            return self.default_split
        split = str(value).strip().lower()
        if split not in SPLITS:
            errors.append(LineError(line, f"unknown split {value!r}; use {', '.join(SPLITS)}."))
        return split

    def _external_id(self, line: int, value: Any, errors: list[LineError]) -> str:
        if value is None:
            external_id = f"{self.id_prefix}-{line}"
        elif (
            isinstance(value, bool) or not isinstance(value, str | int) or str(value).strip() == ""
        ):
            errors.append(LineError(line, "id must be a non-empty string or integer."))
            return ""
        else:
            external_id = str(value).strip()
        if problem := id_problem(external_id):
            errors.append(LineError(line, problem))
        elif external_id in self.first_seen:
            errors.append(
                LineError(
                    line,
                    f"duplicate id {external_id!r} (first seen on line "
                    f"{self.first_seen[external_id]}).",
                )
            )
        else:
            self.first_seen[external_id] = line
        return external_id


def parse_file(
    *,
    project: Project,
    data: bytes,
    fmt: str,
    mapping: dict[str, str],
    default_split: str,
    id_prefix: str,
    progress: Progress | None = None,
    new_ids_only: bool = True,
    label_map: dict[str, str] | None = None,
    skipped: list[LineError] | None = None,
) -> list[ParsedRow]:
    """The file's rows; any problem rejects it whole (ImportRejected), unless `skipped` is a
    list: then rows with problems are left out, their problems put there. Problems of the whole
    file (format, header, size, no good row) reject it anyway."""
    if fmt not in FORMATS:
        raise ImportRejected(
            [LineError(None, f"unknown format {fmt!r}; use {', '.join(FORMATS)}.")]
        )
    if default_split not in SPLITS:
        raise ImportRejected([LineError(None, f"unknown split {default_split!r}.")])
    _check_mapping(project, mapping)
    text = decode(data)
    total_lines = text.count("\n") + 1
    parser = RowParser(project, mapping, default_split, id_prefix, label_map)
    rows: list[ParsedRow] = []
    errors: list[LineError] = []
    header_checked = fmt == "jsonl"
    for line, record in read_rows(text, fmt):
        if isinstance(record, LineError):
            errors.append(record)
        else:
            if not header_checked:
                header_checked = True
                missing = _missing_columns(parser, record)
                if missing:
                    raise ImportRejected([LineError(1, missing)])
            parsed = parser.parse(line, record)
            if isinstance(parsed, list):
                errors.extend(parsed)
            else:
                rows.append(parsed)
        if too_many := over_row_limit(line, len(rows)):
            raise ImportRejected([*errors, too_many])
        if progress and line % 1000 == 0:
            progress("checking", line, total_lines)
    if new_ids_only:
        errors += _existing_ids(project, rows)
    return _rows_kept(rows, errors, skipped)


def _rows_kept(
    rows: list[ParsedRow], errors: list[LineError], skipped: list[LineError] | None
) -> list[ParsedRow]:
    """The rows to import. Rows with problems are left out, their problems put in `skipped`,
    if it is a list and every problem is a row's; otherwise any problem rejects the file."""
    if errors and skipped is not None and all(e.line is not None for e in errors):
        bad = {e.line for e in errors}
        rows = [row for row in rows if row.line not in bad]
        if not rows:
            raise ImportRejected([*errors, LineError(None, "no row can be imported.")])
        skipped += sorted(errors, key=lambda e: e.line or 0)
        errors = []
    if not rows and not errors:
        errors.append(LineError(None, "the file holds no rows."))
    if errors:
        raise ImportRejected(errors)
    return rows


def targets(project: Project) -> list[tuple[str, bool]]:
    """What a column can be read as, and whether the import needs it."""
    truth = "answers" if project.is_free_text else "label"
    return [
        *((name, True) for name in project.field_names),
        (truth, True),
        ("id", False),
        ("split", False),
    ]


def _check_mapping(project: Project, mapping: dict[str, str]) -> None:
    if not isinstance(mapping, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()
    ):
        raise ImportRejected([LineError(None, "mapping must be an object of target: column.")])
    names = {target for target, _ in targets(project)}
    unknown = sorted(set(mapping) - names)
    if unknown:
        raise ImportRejected(
            [
                LineError(
                    None,
                    f"mapping names unknown targets {', '.join(unknown)}; "
                    f"targets are {', '.join(sorted(names))}.",
                )
            ]
        )


def _missing_columns(parser: RowParser, header_row: dict[str, Any]) -> str | None:
    """For CSV/TSV, a missing column is one error on the header, not one per row."""
    may_lack = parser.project.optional_field_names
    required = [*(n for n in parser.project.field_names if n not in may_lack), parser.truth]
    missing = [t for t in required if parser.source(t) not in header_row]
    for optional in ("id", "split"):
        if optional in parser.mapping and parser.source(optional) not in header_row:
            missing.append(optional)
    if not missing:
        return None
    described = ", ".join(parser._named(t) for t in missing)
    return f"the header lacks {described}; it has {', '.join(header_row)}."


def _existing_ids(project: Project, rows: list[ParsedRow]) -> list[LineError]:
    by_id = {row.external_id: row.line for row in rows}
    taken = present_values(Example, "external_id", list(by_id), project_id=project.pk)
    return [
        LineError(by_id[i], f"id {i!r} already exists in this project.")
        for i in sorted(taken, key=lambda i: by_id[i] or 0)
    ]


def import_examples(
    *,
    project: Project,
    user: Any,
    data: bytes,
    source_name: str,
    fmt: str | None = None,
    mapping: dict[str, str] | None = None,
    default_split: str = "test",
    progress: Progress | None = None,
    labels: dict[str, str] | None = None,
    skip_bad: bool = False,
) -> ImportBatch:
    """Import originals from JSONL, CSV or TSV in one transaction; raise ImportRejected if bad.
    `labels` maps label values of the file to project labels ({"Negative": "negative"}).
    `skip_bad`: import the good rows, and keep the bad lines with their problems on the batch
    (`skipped`), instead of rejecting the file."""
    fmt = fmt or guess_format(source_name)
    mapping = mapping or {}
    skipped: list[LineError] = []
    rows = parse_file(
        project=project,
        data=data,
        fmt=fmt,
        mapping=mapping,
        default_split=default_split,
        id_prefix=PurePath(source_name).stem or "row",
        progress=progress,
        label_map=labels,
        skipped=skipped if skip_bad else None,
    )
    try:
        with transaction.atomic():
            batch = ImportBatch.objects.create(
                project=project,
                created_by=user_or_none(user),
                source_name=source_name,
                format=fmt,
                mapping=mapping,
                row_count=len(rows),
                sha256=hashlib.sha256(data).hexdigest(),
                skipped=_with_text(skipped, data),
            )
            # COPY, the foreign keys checked as each batch is stored (not all at commit).
            with immediate_constraints():
                insert_rows(Example, _columns(project, batch, rows, progress), returning_ids=False)
            index_later(project.pk)
            AuditLog.record(
                actor=user,
                action="examples_imported",
                project=project,
                batch=batch.pk,
                source=source_name,
                rows=len(rows),
            )
    except IntegrityError:
        # Another import took some of these ids between our check and our insert.
        raise ImportRejected(
            [LineError(None, "some ids were imported by someone else meanwhile; try again.")]
        ) from None
    analyze(Example)
    return batch


def _columns(
    project: Project, batch: ImportBatch, rows: list[ParsedRow], progress: Progress | None
) -> Iterator[dict[str, Any]]:
    """The rows as Example's columns, for insert_rows; "saving" progress as they are read."""
    for n, row in enumerate(rows, start=1):
        yield {
            "project_id": project.pk,
            "batch_id": batch.pk,
            "external_id": row.external_id,
            "fields": row.fields,
            "label": row.label,
            "answers": row.answers,
            "split": row.split,
            "metadata": row.metadata,
            "searchable": False,  # indexed for search after the import (Example.searchable)
        }
        if progress and (n % BATCH == 0 or n == len(rows)):
            progress("saving", n, len(rows))


def _with_text(skipped: list[LineError], data: bytes) -> list[dict[str, Any]]:
    """Skipped lines as kept on their batch: the problem, and the line's text as it was."""
    if not skipped:
        return []
    lines = data.decode("utf-8-sig").split("\n")
    return [
        {"line": e.line, "message": e.message, "text": lines[e.line - 1][:2000].rstrip("\r")}
        for e in skipped
        if e.line is not None and e.line <= len(lines)
    ]
