"""A row of the Data page as the page, the API and the selection's export all show it: one
function per kind, reading a page's rows with their relations in a fixed number of queries."""

from typing import Any

from django.db.models import Count, Q, QuerySet

from annotation.models import Example, ImportBatch, Perturbation

# An import's warnings and skipped lines are not read with each of its rows: a page of 50 rows
# of one import read them 50 times (1.2 s of a text search's 1.3 s at 1M:
# benchmarks/search_index.py).
BATCH_BULK = [f"batch__{name}" for name in ImportBatch.BULKY]


def perturbation_records(qs: "QuerySet[Perturbation]") -> "QuerySet[Perturbation]":
    related = qs.select_related("pivot", "author", "item", "batch").defer(*BATCH_BULK)
    return related.prefetch_related("tags", "release_entries__release")


def original_records(qs: "QuerySet[Example]", author: Any = None) -> "QuerySet[Example]":
    """Originals with their count of live perturbations: every author's, or `author`'s alone
    (an expert's own work is all they may count)."""
    live = ~Q(perturbations__status=Perturbation.Status.WITHDRAWN)
    if author is not None:
        live &= Q(perturbations__author=author)
    return (
        qs.select_related("batch", "control_item")
        .defer(*BATCH_BULK)
        .annotate(n_perturbations=Count("perturbations", filter=live))
    )


def perturbation_record(p: Perturbation) -> dict[str, Any]:
    item = getattr(p, "item", None)
    return {
        "kind": "perturbation",
        "id": p.pk,
        "release_id": p.release_id,
        "original": p.pivot.external_id,
        "original_id": p.pivot_id,
        "split": p.pivot.split,
        "author": p.author.username,
        "status": p.status,
        "label": p.label,
        "answers": p.answers,
        "majority_label": p.majority_label,
        "votes": item.label_votes if item else {},
        "counted_votes": item.counted_votes if item else 0,
        "tags": sorted(t.name for t in p.tags.all()),
        "batch": p.batch_id,
        "releases": sorted(e.release.version for e in p.release_entries.all()),
        "fields": p.fields,
        "updated_at": p.updated_at,
    }


def original_record(e: Example) -> dict[str, Any]:
    control = getattr(e, "control_item", None)
    return {
        "kind": "original",
        "id": e.pk,
        "external_id": e.external_id,
        "split": e.split,
        "label": e.label,
        "answers": e.answers,
        "waits_for_answer": e.waits_for_answer,
        "perturbations": getattr(e, "n_perturbations", None),
        "control": {"status": control.status, "votes": control.label_votes} if control else None,
        "batch": e.batch_id,
        "fields": e.fields,
    }


def flat(record: dict[str, Any]) -> dict[str, Any]:
    """A record for a spreadsheet: each field its own column, lists as comma-separated text."""
    fields = record["fields"]
    rest = {k: v for k, v in record.items() if k != "fields"}
    for key in ("tags", "releases"):
        if key in rest:
            rest[key] = ", ".join(rest[key])
    return {"kind": rest.pop("kind"), "id": rest.pop("id"), **fields, **rest}


def records(kind: str, rows: list[Any]) -> list[dict[str, Any]]:
    convert = original_record if kind == "originals" else perturbation_record
    return [convert(row) for row in rows]


def with_relations(kind: str, qs: QuerySet[Any], author: Any = None) -> QuerySet[Any]:
    return original_records(qs, author) if kind == "originals" else perturbation_records(qs)
