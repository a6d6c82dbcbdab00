"""An import of originals in two steps on the Import page: the upload is staged, previewed as
the product will read it (columns and label values chosen from the file's own), then committed
with that mapping by the import itself (originals.import_examples). A staged upload lives under
MEDIA_ROOT/staged/<random token>/ and belongs to one user and project."""

import io
import json
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files import File

from annotation.errors import DomainError, ImportRejected, group_errors
from annotation.imports.paired import parse_paired_tsv
from annotation.imports.readers import LineError, decode, guess_format, read_rows, resolve_label
from annotation.imports.services.originals import RowParser, targets
from annotation.imports.services.sets import check_sets, parse_sets_jsonl
from annotation.models import Project
from annotation.uploads import staged_folder

PREVIEW_ROWS = 5
MAX_LABEL_VALUES = 50
STAGED_HOURS = 24
# Columns people name their labels and texts, besides the project's own names.
ALIASES = {
    "label": ("label", "labels", "sentiment", "gold_label", "gold", "class", "category"),
    "answers": ("answers", "answer", "gold_answers"),
    "text": ("text", "sentence", "review", "content", "body"),
    "id": ("id", "example_id", "uid", "guid"),
    "split": ("split", "partition"),
}


@dataclass
class Preview:
    name: str
    fmt: str
    columns: list[str]
    mapping: dict[str, str]  # target -> column ("" for an optional target left out)
    rows: list[dict[str, Any]] = field(default_factory=list)
    label_values: list[tuple[str, str | None]] = field(default_factory=list)  # value -> label
    lines: int = 0
    bad: int = 0  # rows of the whole file that the import would refuse as they are read

    @property
    def good(self) -> int:
        return self.lines - self.bad

    @property
    def others(self) -> list[str]:
        """Columns read as nothing: kept as each example's metadata."""
        return [c for c in self.columns if c not in self.mapping.values()]


def stage(project: Project, user: Any, uploads: dict[str, Any]) -> str:
    """Keep uploads (form field -> file) for their preview and commit; their token. Staged
    uploads older than a day go."""
    sweep_uploads()
    token = uuid.uuid4().hex
    folder = staged_folder() / token
    folder.mkdir(parents=True)
    for name, upload in uploads.items():
        with (folder / name).open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
    names = {name: Path(upload.name).name for name, upload in uploads.items()}
    meta = {"project": project.pk, "user": user.pk, "files": names}
    (folder / "meta.json").write_text(json.dumps(meta))
    return token


def staged(project: Project, user: Any, token: str) -> dict[str, bytes | str]:
    """The staged uploads of this token, if they are this user's for this project: each
    field's bytes, and under "<field>.name" its file name."""
    folder = staged_folder() / token
    try:
        valid = len(token) == 32 and int(token, 16) >= 0
        meta = json.loads((folder / "meta.json").read_text()) if valid else None
    except (ValueError, OSError):
        meta = None
    if not meta or (meta["project"], meta["user"]) != (project.pk, user.pk):
        raise DomainError("That upload is gone (uploads are kept a day): choose the file again.")
    out: dict[str, bytes | str] = {}
    for name, original in meta["files"].items():
        out[name], out[f"{name}.name"] = (folder / name).read_bytes(), original
    return out


def as_files(stored: dict[str, bytes | str]) -> dict[str, File]:
    """Staged uploads as the imports take them (a file with .read() and .name)."""
    return {
        name: File(io.BytesIO(data), name=str(stored[f"{name}.name"]))
        for name, data in stored.items()
        if isinstance(data, bytes)
    }


def discard(token: str) -> None:
    shutil.rmtree(staged_folder() / token, ignore_errors=True)


def sweep_uploads() -> None:
    """Staged uploads past their day, and the parts of uploads whose web process was killed
    while receiving them (FILE_UPLOAD_TEMP_DIR)."""
    cutoff = time.time() - STAGED_HOURS * 3600
    for parent in (staged_folder(), Path(settings.FILE_UPLOAD_TEMP_DIR)):
        for path in parent.iterdir() if parent.exists() else ():
            if path.stat().st_mtime >= cutoff:
                continue
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def guess(project: Project, columns: list[str]) -> dict[str, str]:
    """Each target's column: its own name, else a usual name for it, case aside."""
    by_fold = {column.casefold(): column for column in columns}
    mapping = {}
    for target, _ in targets(project):
        names = (target, *ALIASES.get(target, ()))
        mapping[target] = next((by_fold[n] for n in names if n in by_fold), "")
    return mapping


def preview(
    project: Project,
    stored: dict[str, Any],
    fmt: str | None,
    mapping: dict[str, str] | None,
    label_map: dict[str, str],
    default_split: str,
) -> Preview:
    """The file's columns, the first rows as the import would read them (or their problems),
    and the values of the label column with the label each would become."""
    name = stored["file.name"]
    fmt = fmt or guess_format(name)
    records, names = _records(stored["file"], fmt)
    chosen = guess(project, names) if mapping is None else mapping
    result = Preview(name=name, fmt=fmt, columns=names, mapping=chosen, lines=len(records))
    parser = RowParser(
        project,
        {t: c for t, c in chosen.items() if c},
        default_split,
        Path(name).stem or "row",
        label_map,
    )
    for n, (line, record) in enumerate(records):
        parsed = record if isinstance(record, LineError) else parser.parse(line, record)
        result.bad += isinstance(parsed, LineError | list)
        if n < PREVIEW_ROWS:
            result.rows.append(_row_shown(project, line, parsed))
    column = chosen.get("label", "")
    if column and not project.is_free_text:
        values: dict[str, None] = {}
        for _, record in records:
            if isinstance(record, dict) and str(record.get(column, "")).strip():
                values[str(record[column]).strip()] = None
            if len(values) > MAX_LABEL_VALUES:
                break
        result.label_values = [
            (value, resolve_label(value, project.labels, label_map)) for value in values
        ]
    return result


def _records(data: bytes, fmt: str) -> tuple[list[tuple[int, Any]], list[str]]:
    """Every record of the file with its line (a row, or its LineError), and the columns of
    all rows; refused when the first record is bad or no row has a column."""
    records: list[tuple[int, dict[str, Any] | LineError]] = []
    columns: dict[str, None] = {}
    for line, record in read_rows(decode(data), fmt):
        if isinstance(record, LineError) and not records and not columns:
            raise ImportRejected([record])
        if isinstance(record, dict):
            columns.update(dict.fromkeys(record))
        records.append((line, record))
    if not columns:
        raise ImportRejected([LineError(None, "the file holds no rows.")])
    return records, list(columns)


def _row_shown(project: Project, line: int, parsed: Any) -> dict[str, Any]:
    """A row of the preview: as the import reads it, or its problems."""
    if isinstance(parsed, LineError):
        return {"line": line, "errors": [parsed.message]}
    if isinstance(parsed, list):
        return {"line": line, "errors": [e.message for e in parsed]}
    truth = ", ".join(parsed.answers) if project.is_free_text else parsed.label
    return {
        "line": line,
        "id": parsed.external_id,
        "fields": parsed.fields,
        "truth": truth,
        "split": parsed.split,
        "errors": [],
    }


# Contrast sets (sets.jsonl, or paired TSV files) -------------------------------------------


@dataclass
class SetPreview:
    fmt: str  # paired_tsv or sets_jsonl
    names: list[str]
    columns: list[str] = field(default_factory=list)  # paired TSV: the originals' header
    mapping: dict[str, str] = field(default_factory=dict)
    label_values: list[tuple[str, str | None]] = field(default_factory=list)
    sets: list[dict[str, Any]] = field(default_factory=list)  # the first ones, as read
    count: int = 0  # sets read, when the file reads whole
    problems: list[LineError] = field(default_factory=list)


def set_targets(project: Project) -> list[tuple[str, bool]]:
    """What a column of paired TSV files can be read as, and whether it is needed."""
    return [
        *((name, True) for name in project.field_names),
        ("label", True),
        ("tags", False),
        ("id", False),
    ]


def set_preview(
    project: Project,
    stored: dict[str, Any],
    fmt: str,
    mapping: dict[str, str] | None,
    label_map: dict[str, str],
    split: str,
    tags: list[str],
) -> SetPreview:
    """The first sets as the import would read them, or the file's problems; the file's label
    values with the label each would become; for paired TSV, the columns to choose from."""
    files = [name for name in ("file", "original", "contrast") if name in stored]
    shown = SetPreview(fmt=fmt, names=[str(stored[f"{name}.name"]) for name in files])
    values: dict[str, None] = {}
    try:
        if fmt == "paired_tsv":
            parsed = _paired_read(project, stored, shown, mapping, label_map, split, tags, values)
        else:
            values.update(dict.fromkeys(_jsonl_labels(stored["file"])))
            parsed = parse_sets_jsonl(project, stored["file"], tags, label_map)
        # Each perturbation checked as the import will check it; the sets stay shown, so that
        # a missing tag, say, can be given before importing.
        names = set(project.tags.values_list("name", flat=True))
        shown.problems = group_errors(check_sets(project, parsed, names)[0])
    except ImportRejected as rejected:
        shown.problems = rejected.errors
        parsed = []
    if not project.is_free_text:
        shown.label_values = [
            (v, resolve_label(v, project.labels, label_map)) for v in values if v
        ][:MAX_LABEL_VALUES]
    shown.count = len(parsed)
    shown.sets = [_set_shown(project, s) for s in parsed[:PREVIEW_ROWS]]
    return shown


def _paired_read(
    project: Project,
    stored: dict[str, Any],
    shown: SetPreview,
    mapping: dict[str, str] | None,
    label_map: dict[str, str],
    split: str,
    tags: list[str],
    values: dict[str, None],
) -> list[Any]:
    """Paired TSV files: their columns and the mapping (guessed, or chosen) on `shown`, the
    label column's values into `values`, and the sets read."""
    texts = [decode(stored["original"]), decode(stored["contrast"])]
    rows = [r for text in texts for _, r in read_rows(text, "tsv") if isinstance(r, dict)]
    shown.columns = list(rows[0]) if rows else []
    by_fold = {c.casefold(): c for c in shown.columns}
    guessed = {**guess(project, shown.columns), "tags": by_fold.get("tags", "")}
    shown.mapping = guessed if mapping is None else mapping
    column = shown.mapping.get("label", "")
    values.update(dict.fromkeys(str(r.get(column, "")).strip() for r in rows if column))
    return parse_paired_tsv(
        project,
        stored["original"],
        stored["contrast"],
        mapping={t: c for t, c in shown.mapping.items() if c},
        split=split,
        source_name=str(stored["original.name"]),
        tags=tags,
        label_map=label_map,
    )


def _jsonl_labels(data: bytes) -> list[str]:
    """The label values of every member of every set of a sets.jsonl, as written."""
    values = []
    for _, record in read_rows(decode(data), "jsonl"):
        if isinstance(record, dict):
            members = [record.get("original"), *(record.get("perturbations") or [])]
            values += [
                str(m["label"]).strip()
                for m in members
                if isinstance(m, dict) and isinstance(m.get("label"), str)
            ]
    return values


def _set_shown(project: Project, s: Any) -> dict[str, Any]:
    def truth(member: Any) -> str:
        return ", ".join(member["answers"]) if project.is_free_text else member["label"]

    original = s.original
    shown_truth = ", ".join(original.answers) if project.is_free_text else original.label
    return {
        "line": s.line,
        "id": original.external_id,
        "original": (project.editable_text(original.fields), shown_truth),
        "perturbations": [
            (project.editable_text(p["fields"]), truth(p), ", ".join(p["tags"]))
            for p in s.perturbations
        ],
    }
