"""The rows a set import writes (annotation.imports.services.sets, inside its transaction): the new
originals, the perturbations and their tags, as plain rows by COPY (annotation.bulk), where
Django's bulk_create spent 9 of a 20k-set import's 22 s building and quoting model instances
(benchmarks/originals_import.py)."""

from typing import Any, NamedTuple

from django.utils import timezone

from annotation.bulk import immediate_constraints, insert_rows
from annotation.imports.paired import ParsedSet
from annotation.imports.set_checks import repeated, truth_of
from annotation.models import SET_OF_ONE, Example, ImportBatch, Perturbation, Project, Tag
from annotation.text.edits import fields_edit_distance, normalize_whitespace
from annotation.validation.services.queue import items_open_for


class Pivot(NamedTuple):
    pk: int
    fields: dict[str, str]
    new: bool = False  # made by this import: it has no perturbation yet


def originals_create(
    project: Project, sets: list[ParsedSet], batch: ImportBatch
) -> dict[str, Pivot]:
    """The sets' originals, once each, as new rows of the batch: their pivots by id."""
    rows = [
        {
            "project_id": project.pk,
            "batch_id": batch.pk,
            "external_id": s.original.external_id,
            "fields": s.original.fields,
            "label": s.original.label,
            "answers": s.original.answers,
            "split": s.original.split,
            "metadata": {SET_OF_ONE: True} if not s.perturbations else {},
            "searchable": False,  # indexed for search after the import (Example.searchable)
        }
        for s in sets
    ]
    with immediate_constraints():  # each batch's keys checked as it is stored, not at commit
        ids = insert_rows(Example, rows)
    return {
        s.original.external_id: Pivot(pk, s.original.fields, new=True)
        for s, pk in zip(sets, ids, strict=True)
    }


def perturbations_create(
    project: Project,
    sets: list[ParsedSet],
    pivots: dict[str, Pivot],
    tags: dict[str, Tag],
    author: Any,
    accept: bool,
    batch: ImportBatch,
) -> tuple[int, int, list[Any]]:
    """Perturbations created (with their tags, and their validation items unless accepted),
    those already present (same pivot, text and truth), and the repeats kept."""
    now = timezone.now()
    version = project.current_guideline_version()
    status = Perturbation.Status.ACCEPTED if accept else Perturbation.Status.SUBMITTED
    present = _present([p.pk for p in pivots.values() if not p.new])
    rows: list[dict[str, Any]] = []
    tag_names: list[list[str]] = []
    skipped, repeats = 0, []
    here: dict[tuple[Any, ...], tuple[int | None, str]] = {}  # first of each, in this import
    for s in sets:
        pivot = pivots[s.original.external_id]
        for n, p in enumerate(s.perturbations, 1):
            key = (pivot.pk, text_key(p["fields"]), truth_of(p))
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
            distance = p.get("edit_distance")  # as check_sets measured it, or now
            if distance is None:
                names = project.editable_field_names
                distance = fields_edit_distance(pivot.fields, p["fields"], names)
            rows.append(
                {
                    "project_id": project.pk,
                    "pivot_id": pivot.pk,
                    "author_id": author.pk,
                    "batch_id": batch.pk,
                    "external_id": p.get("id") or "",
                    "fields": p["fields"],
                    "label": p["label"],
                    "answers": p.get("answers") or [],
                    "status": status,
                    "guideline_version": version,
                    "edit_distance": distance,
                    "created_at": now,
                    "updated_at": now,
                    "submitted_at": now,
                    "resolved_at": now if accept else None,
                    "searchable": False,
                }
            )
            tag_names.append(p["tags"])
    if not rows:
        return 0, skipped, repeats
    with immediate_constraints():
        ids = insert_rows(Perturbation, rows)
        through = [
            {"perturbation_id": pk, "tag_id": tags[name].pk}
            for pk, names in zip(ids, tag_names, strict=True)
            for name in dict.fromkeys(names)  # a tag named twice is one row
        ]
        insert_rows(Perturbation.tags.through, through, returning_ids=False)
    if not accept:  # each opens its item, in the order of the file, as the editor's would
        created = Perturbation.objects.select_related("pivot", "project", "author").in_bulk(ids)
        for pk in ids:
            items_open_for(created[pk])
    return len(rows), skipped, repeats


def text_key(fields: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((name, normalize_whitespace(text)) for name, text in fields.items()))


def _present(pivot_ids: list[int]) -> set[tuple[Any, ...]]:
    """(pivot, text, truth) of the live perturbations these pivots already have (those an
    import made have none: asking for 20k of them cost 0.1-0.2 s of the ORM's IN lists)."""
    if not pivot_ids:
        return set()
    rows = Perturbation.objects.filter(pivot__in=pivot_ids)
    rows = rows.exclude(status=Perturbation.Status.WITHDRAWN)
    columns = ("pivot_id", "fields", "label", "answers")
    return {
        (pivot_id, text_key(fields), truth_of({"label": label, "answers": answers}))
        for pivot_id, fields, label, answers in rows.values_list(*columns)
    }
