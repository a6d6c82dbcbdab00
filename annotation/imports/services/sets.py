"""Import of existing contrast sets (docs/workflows.md): a release's set lines, or paired TSV files
where row i of the originals pairs with row i of the contrasts.

Imported perturbations are credited to a named pseudo-author (an inactive account) and are
either marked accepted or sent to validation. All sets or none are imported.
"""

from collections.abc import Sequence
from typing import Any, NamedTuple

from django.db import transaction

from annotation.bulk import analyze, present_values
from annotation.data.tasks import index_later
from annotation.errors import ImportRejected
from annotation.imports import paired
from annotation.imports.accounts import inactive_user
from annotation.imports.paired import ParsedSet
from annotation.imports.readers import (
    LineError,
    decode,
    id_problem,
    over_row_limit,
    read_jsonl,
    resolve_label,
)
from annotation.imports.services.originals import ParsedRow
from annotation.imports.set_checks import (
    Counted,
    alone,
    check_perturbation,
    check_text,
    erased_answers,
    kept_edit,
    readonly_edits,
    rule_warnings,
    stored,
    summarised,
    truth_of,
)
from annotation.imports.set_rows import Pivot, originals_create, perturbations_create
from annotation.models import (
    AuditLog,
    Example,
    ImportBatch,
    Perturbation,
    Project,
    Tag,
    ValidationItem,
    user_or_none,
)
from annotation.models.config import SPLITS
from annotation.releases.bundle import parse_set_record
from annotation.text.answers import AnswerRules, clean_answers
from annotation.text.edits import fields_edit_distance


class SetsImported(NamedTuple):
    created: int
    skipped: int  # already present: same pivot, text and label
    warnings: list[Counted]  # summarised (set_checks); every one is on the batch
    warning_count: int  # before grouping
    batch: int  # the ImportBatch, whose `warnings` holds every warning


def parse_sets_jsonl(
    project: Project, data: bytes, default_tags: list[str], label_map: dict[str, str] | None = None
) -> list[ParsedSet]:
    sets: list[ParsedSet] = []
    errors: list[LineError] = []
    for line_no, record in read_jsonl(decode(data)):
        if too_many := over_row_limit(line_no, len(sets) + len(errors) + 1):
            errors.append(too_many)
            break
        if isinstance(record, LineError):
            errors.append(record)
            continue
        parsed = _parse_set(project, line_no, record, default_tags, label_map or {})
        if isinstance(parsed, list):
            errors.extend(parsed)
        else:
            sets.append(parsed)
    if errors:
        raise ImportRejected(errors)
    return sets


def _parse_set(
    project: Project, line: int, record: Any, default_tags: list[str], label_map: dict[str, str]
) -> ParsedSet | list[LineError]:
    parsed = parse_set_record(record)
    if isinstance(parsed, str):
        return [LineError(line, parsed)]
    original = parsed.original
    errors = check_text(project, line, original.get("fields"), "original")
    label: str | None = ""
    answers = clean_answers(original.get("answers")) if project.is_free_text else []
    if isinstance(answers, str):
        errors.append(LineError(line, f"original: {answers}"))
    if not project.is_free_text:
        label = resolve_label(str(original.get("label", "")), project.labels, label_map)
    if label is None:
        errors.append(LineError(line, f"original: unknown label {original.get('label')!r}."))
    if parsed.split not in SPLITS:
        errors.append(LineError(line, f"unknown split {parsed.split!r}."))
    if problem := id_problem(parsed.set_id, "the original's id (or the set's set_id)"):
        errors.append(LineError(line, problem))
    if errors:
        return errors
    fields = {name: original["fields"][name] for name in project.field_names}
    kept = answers if isinstance(answers, list) else []
    row = ParsedRow(line, parsed.set_id, fields, str(label), parsed.split, answers=kept)
    items = []
    for p in parsed.perturbations:  # checked with every other set's (check_sets)
        raw = p.get("label")
        given_id = str(p["id"]) if isinstance(p.get("id"), str | int) else ""
        items.append(
            {
                "fields": p.get("fields"),
                "label": ""
                if project.is_free_text
                else resolve_label(str(raw), project.labels, label_map) or raw,
                "answers": clean_answers(p.get("answers")) if project.is_free_text else [],
                "tags": p.get("tags") or default_tags,
                "id": given_id,
            }
        )
        if given_id and (problem := id_problem(given_id, "a perturbation's id")):
            errors.append(LineError(line, problem))
    return errors or ParsedSet(line, row, items)


def import_sets(
    *,
    project: Project,
    user: Any,
    sets: list[ParsedSet],
    source_name: str,
    author: str = "imported",
    accept: bool = False,
    strict: bool = False,
    published: bool = False,
    columns: dict[str, str] | None = None,
    left_out: Sequence[LineError] = (),
    kept_notes: Sequence[LineError] = (),
) -> SetsImported:
    """Save parsed sets in one transaction. A perturbation its pivot already has (same text and
    label) is not created again, so importing a file twice changes nothing the second time.
    Sets are kept as written (docs/published/): edits that break the authoring rules, edits
    of read-only fields, repeats inside a set and answers the project's rules normalise to
    nothing are kept, each with a warning, or refuse the file when `strict`. A `published`
    dataset's tags are created."""
    tags = {t.name: t for t in Tag.objects.filter(project=project)}
    missing = _tags_named(sets) - set(tags) if published else set()
    errors, warnings = check_sets(project, sets, set(tags) | set(missing))
    if strict:
        errors, warnings = errors + warnings, []
    seen, existing, clashes = _originals(project, sets)
    if errors or clashes:
        raise ImportRejected(errors + clashes)
    with transaction.atomic():
        for name in sorted(missing):
            tags[name] = Tag.objects.create(project=project, name=name)
        pseudo = inactive_user(f"pseudo-{author}")
        batch = ImportBatch.objects.create(
            project=project,
            created_by=user_or_none(user),
            kind="sets",
            source_name=source_name,
            # A paired TSV's own column names: its release's paired TSVs write them back.
            format="paired_tsv" if columns is not None else "sets",
            mapping=columns or {},
            row_count=len(sets),
            sha256="",
        )
        pivots = originals_create(project, [s for i, s in seen.items() if i not in existing], batch)
        pivots.update({i: Pivot(e.pk, e.fields) for i, e in existing.items()})
        created, skipped, repeats = perturbations_create(
            project, sets, pivots, tags, pseudo, accept, batch
        )
        index_later(project.pk)  # their text search's index, after the commit (set_rows)
        if strict and repeats:
            raise ImportRejected(repeats)
        every = [*kept_notes, *warnings, *repeats]  # kept_notes: what a reader renamed
        batch.warnings = [stored(w, source_name) for w in every]
        batch.skipped = [stored(w, source_name) for w in left_out]
        batch.save(update_fields=["warnings", "skipped"])
        result = SetsImported(created, skipped, summarised(every), len(every), batch.pk)
        AuditLog.record(
            actor=user,
            action="sets_imported",
            project=project,
            source=source_name,
            sets=len(sets),
            perturbations=result.created,
            already_present=result.skipped,
            accepted=accept,
            author=author,
            batch=batch.pk,
        )
    # Accepted sets open no validation item: that table is as it was.
    analyze(Example, Perturbation, Perturbation.tags.through, *([] if accept else [ValidationItem]))
    return result


def _tags_named(sets: list[ParsedSet]) -> set[str]:
    """The tag names a published dataset's perturbations carry (created on import)."""
    named = {t for s in sets for p in s.perturbations for t in p["tags"] or []}
    return {t for t in named if isinstance(t, str) and t.strip()}


def check_sets(
    project: Project, sets: list[ParsedSet], tag_names: set[str]
) -> tuple[list[LineError], list[LineError]]:
    """Every perturbation checked once, as every import of sets checks it: the errors, and the
    warnings of what is kept as written, those about the whole file first (a long list must not
    hide them). A perturbation that passes keeps only the project's fields."""
    errors, warnings, kept = [], [], []  # kept: published edits of read-only fields
    for s in sets:
        for p in s.perturbations:
            problems = check_perturbation(project, s.line, s.original, p, tag_names)
            errors += problems
            if problems:
                continue
            p["fields"] = {name: p["fields"][name] for name in project.field_names}
            for name in readonly_edits(project, s.original, p):
                kept.append(kept_edit(name, p, s.line, s.original.external_id))
            warnings += rule_warnings(project, s.line, s.original, p)
            # Measured now, while the texts' tokens are at hand (text.edits): stored as is.
            p["edit_distance"] = fields_edit_distance(
                s.original.fields, p["fields"], project.editable_field_names
            )
    erased = erased_answers(project, _erased(project, sets))
    return errors, erased + kept + alone(sets) + warnings


def _originals(
    project: Project, sets: list[ParsedSet]
) -> tuple[dict[str, ParsedSet], dict[str, Example], list[LineError]]:
    """Each original once (by id), those the project already has, and the clashes: one id
    with two texts in the file, or with another text or label in the project."""
    errors = []
    seen: dict[str, ParsedSet] = {}
    for s in sets:
        first = seen.setdefault(s.original.external_id, s)
        if first is not s and first.original.fields != s.original.fields:
            errors.append(LineError(s.line, f"id {s.original.external_id!r} has two texts."))
    # The ids taken first, in one query: a new project's (most imports') read no Example.
    taken = present_values(Example, "external_id", list(seen), project_id=project.pk)
    existing = {
        e.external_id: e
        for e in Example.objects.filter(project=project, external_id__in=sorted(taken))
    }
    for external_id, example in existing.items():
        s = seen[external_id]
        if (example.fields, truth_of(example)) != (s.original.fields, truth_of(s.original)):
            errors.append(
                LineError(s.line, f"id {external_id!r} exists with another text or label.")
            )
    return seen, existing, errors


def _erased(project: Project, sets: list[ParsedSet]) -> list[str]:
    """The answers of these sets that the project's rules normalise to nothing."""
    if not project.is_free_text:
        return []
    rules = AnswerRules.of(project)
    rows = [s.original.answers for s in sets] + [
        p.get("answers") or [] for s in sets for p in s.perturbations
    ]
    return [a for answers in rows for a in rules.erased(answers)]


def run_set_import(project: Any, user: Any, values: dict[str, Any]) -> SetsImported:
    """Parse and import sets from validated form values; raises ImportRejected."""
    if project.is_free_text and values["format"] != "sets_jsonl":
        raise ImportRejected(
            [LineError(None, "paired TSV files hold labels; import free-text sets as sets.jsonl.")]
        )
    if values["format"] == "sets_jsonl":
        upload = values["file"]
        sets = parse_sets_jsonl(project, upload.read(), values["tags"], values["labels"])
    else:
        upload = values["original"]
        sets = paired.parse_paired_tsv(
            project,
            upload.read(),
            values["contrast"].read(),
            mapping=values["mapping"] or {},
            split=values["split"],
            source_name=upload.name,
            tags=values["tags"],
            label_map=values["labels"],
        )
    columns, named = None, upload.name
    if values["format"] == "paired_tsv":
        mapping = values["mapping"] or {}
        columns = {t: mapping.get(t, t) for t in ("label", project.field_names[0])}
        named = f"{upload.name}, {values['contrast'].name}"  # a warning's line is in both
    return import_sets(
        project=project,
        user=user,
        sets=sets,
        source_name=named,
        author=values["author"],
        accept=values["accept"],
        strict=values["strict"],
        columns=columns,
    )
