"""Import of existing contrast sets (docs/workflows.md): a release's set lines, or paired TSV files
where row i of the originals pairs with row i of the contrasts.

Imported perturbations are credited to a named pseudo-author (an inactive account) and are
either marked accepted or sent to validation. All sets or none are imported.
"""

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, NamedTuple

from django.db import transaction
from django.utils import timezone

from annotation.bulk import analyze
from annotation.errors import ImportRejected
from annotation.imports import paired
from annotation.imports.accounts import inactive_user
from annotation.imports.originals import ParsedRow
from annotation.imports.paired import ParsedSet
from annotation.imports.readers import (
    LineError,
    decode,
    id_problem,
    over_row_limit,
    read_jsonl,
    resolve_label,
)
from annotation.imports.set_checks import (
    alone,
    check_perturbation,
    check_text,
    erased_answers,
    kept_edits,
    readonly_edits,
    repeated,
    rule_warnings,
    stored,
    summarised,
    truth_of,
)
from annotation.models import (
    SET_OF_ONE,
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
from annotation.text.edits import fields_edit_distance, normalize_whitespace
from annotation.validation.answers import AnswerRules, clean_answers
from annotation.validation.queue import items_open_for


class SetsImported(NamedTuple):
    created: int
    skipped: int  # already present: same pivot, text and label
    warnings: list[LineError]  # summarised (set_checks); every one is on the batch
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
        new = _originals_create(project, [s for i, s in seen.items() if i not in existing], batch)
        pivots = {e.external_id: e for e in [*existing.values(), *new]}
        created, skipped, repeats = _create_perturbations(
            project, sets, pivots, tags, pseudo, accept, batch
        )
        if strict and repeats:
            raise ImportRejected(repeats)
        every = [*kept_notes, *warnings, *repeats]  # kept_notes: a reader's, about the file
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
    analyze(Example, Perturbation, Perturbation.tags.through, ValidationItem)
    return result


def _tags_named(sets: list[ParsedSet]) -> set[str]:
    """The tag names a published dataset's perturbations carry (created on import)."""
    named = {t for s in sets for p in s.perturbations for t in p["tags"] or []}
    return {t for t in named if isinstance(t, str) and t.strip()}


def _originals_create(project: Project, sets: list[ParsedSet], batch: ImportBatch) -> list[Example]:
    new = [
        Example(
            project=project,
            external_id=s.original.external_id,
            fields=s.original.fields,
            label=s.original.label,
            answers=s.original.answers,
            split=s.original.split,
            metadata={SET_OF_ONE: True} if not s.perturbations else {},
            batch=batch,
        )
        for s in sets
    ]
    return Example.objects.bulk_create(new, batch_size=2000)


def check_sets(
    project: Project, sets: list[ParsedSet], tag_names: set[str]
) -> tuple[list[LineError], list[LineError]]:
    """Every perturbation checked once, as every import of sets checks it: the errors, and the
    warnings of what is kept as written, those about the whole file first (a long list must not
    hide them). A perturbation that passes keeps only the project's fields."""
    errors, warnings = [], []
    kept: dict[str, list[str]] = defaultdict(list)  # read-only field -> published edits of it
    for s in sets:
        for p in s.perturbations:
            problems = check_perturbation(project, s.line, s.original, p, tag_names)
            errors += problems
            if problems:
                continue
            p["fields"] = {name: p["fields"][name] for name in project.field_names}
            for name in readonly_edits(project, s.original, p):
                kept[name].append(p.get("where") or p.get("id") or s.original.external_id)
            warnings += rule_warnings(project, s.line, s.original, p)
    summary = [kept_edits(name, wheres) for name, wheres in kept.items()]
    return errors, summary + erased_answers(project, _erased(project, sets)) + alone(
        sets
    ) + warnings


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
    existing = {
        e.external_id: e
        for e in Example.objects.filter(project=project, external_id__in=list(seen))
    }
    for external_id, example in existing.items():
        s = seen[external_id]
        if (example.fields, truth_of(example)) != (s.original.fields, truth_of(s.original)):
            errors.append(
                LineError(s.line, f"id {external_id!r} exists with another text or label.")
            )
    return seen, existing, errors


def _create_perturbations(
    project: Project,
    sets: list[ParsedSet],
    pivots: dict[str, Example],
    tags: dict[str, Tag],
    author: Any,
    accept: bool,
    batch: ImportBatch,
) -> tuple[int, int, list[LineError]]:
    """Perturbations created, those already present, and the repeats kept."""
    now = timezone.now()
    version = project.current_guideline_version()
    status = Perturbation.Status.ACCEPTED if accept else Perturbation.Status.SUBMITTED
    present = _present(project, pivots)
    created, skipped, repeats = [], 0, []  # type: list[Any], int, list[LineError]
    here: dict[tuple[Any, ...], tuple[int | None, str]] = {}  # first of each, in this import
    for s in sets:
        pivot = pivots[s.original.external_id]
        for n, p in enumerate(s.perturbations, 1):
            key = (pivot.pk, _text_key(p["fields"]), truth_of(p))
            where = p.get("where") or f"perturbation {n} of set {s.original.external_id!r}"
            if key in here:
                line, first = here[key]
                at = f" (line {line})" if line and line != s.line else ""
                repeats.append(repeated(p, s.line, f"{where} repeats {first}{at}; both are kept."))
            elif key in present:
                skipped += 1
                continue
            present.add(key)
            here.setdefault(key, (s.line, where))
            perturbation = Perturbation(
                project=project,
                pivot=pivot,
                author=author,
                batch=batch,
                external_id=p.get("id") or "",
                fields=p["fields"],
                label=p["label"],
                answers=p.get("answers") or [],
                status=status,
                guideline_version=version,
                edit_distance=fields_edit_distance(
                    pivot.fields, p["fields"], project.editable_field_names
                ),
                submitted_at=now,
                resolved_at=now if accept else None,
            )
            created.append((perturbation, [tags[t] for t in p["tags"]]))
    Perturbation.objects.bulk_create([p for p, _ in created], batch_size=2000)
    through = Perturbation.tags.through
    through.objects.bulk_create(
        [through(perturbation_id=p.pk, tag_id=t.pk) for p, ts in created for t in ts],
        batch_size=5000,
    )
    if not accept:
        for perturbation, _ in created:
            items_open_for(perturbation)
    return len(created), skipped, repeats


def _erased(project: Project, sets: list[ParsedSet]) -> list[str]:
    """The answers of these sets that the project's rules normalise to nothing."""
    if not project.is_free_text:
        return []
    rules = AnswerRules.of(project)
    rows = [s.original.answers for s in sets] + [
        p.get("answers") or [] for s in sets for p in s.perturbations
    ]
    return [a for answers in rows for a in rules.erased(answers)]


def _text_key(fields: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((name, normalize_whitespace(text)) for name, text in fields.items()))


def _present(project: Project, pivots: dict[str, Example]) -> set[tuple[Any, ...]]:
    """(pivot, text, label) of the live perturbations these pivots already have."""
    rows = Perturbation.objects.filter(pivot__in=[p.pk for p in pivots.values() if p.pk])
    rows = rows.exclude(status=Perturbation.Status.WITHDRAWN)
    columns = ("pivot_id", "fields", "label", "answers")
    return {
        (pivot_id, _text_key(fields), truth_of({"label": label, "answers": answers}))
        for pivot_id, fields, label, answers in rows.values_list(*columns)
    }


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
    columns = None
    if values["format"] == "paired_tsv":
        mapping = values["mapping"] or {}
        columns = {t: mapping.get(t, t) for t in ("label", project.field_names[0])}
    return import_sets(
        project=project,
        user=user,
        sets=sets,
        source_name=upload.name,
        author=values["author"],
        accept=values["accept"],
        strict=values["strict"],
        columns=columns,
    )
