"""A project's validation, for download (admins only): one row per vote, or one per item with
its counted votes per label. Validators appear by username, as on the Validators page."""

from collections.abc import Iterator
from typing import Any

from annotation.models import Project, ValidationItem, Vote, release_id
from annotation.validation.stats import validator_figures

ITEM = ("perturbation_id", "perturbation__external_id", "control__external_id", "external_id")
VOTE_COLUMNS = {
    "split": "item__split",
    "validator": "validator__username",
    "label": "label",
    "answer": "answer",
    "flags": "flags",
    "counted": "counts",
    "seconds_spent": "seconds_spent",
    "guideline_version": "guideline_version",
    "created_at": "created_at",
}
ITEM_COLUMNS = {
    "split": "split",
    "status": "status",
    "gold": "gold_label",
    "majority": "majority_label",
    "counted_votes": "counted_votes",
    "votes_per_label": "label_votes",
}


def item_ref(
    perturbation_id: int | None, published_id: str | None, control_id: str | None, external_id: str
) -> str:
    """An item as people know it: a perturbation's id in releases (its published id, or
    p-<id>), the original's id for a control, the file's id for an imported item."""
    if perturbation_id is not None:
        return release_id(published_id or "", perturbation_id)
    return f"control:{control_id}" if control_id is not None else external_id


def _rows(queryset: Any, prefix: str, columns: dict[str, str]) -> Iterator[dict[str, Any]]:
    lookups = [prefix + name for name in ITEM] + list(columns.values())
    for values in queryset.values_list(*lookups).iterator(chunk_size=5000):
        row = {"item": item_ref(*values[:4]), **dict(zip(columns, values[4:], strict=True))}
        if "created_at" in row:
            row["created_at"] = row["created_at"].isoformat()
        yield row


def vote_rows(project: Project) -> Iterator[dict[str, Any]]:
    votes = Vote.objects.filter(item__project=project).order_by("item_id", "id")
    return _rows(votes, "item__", VOTE_COLUMNS)


def item_rows(project: Project) -> Iterator[dict[str, Any]]:
    return _rows(ValidationItem.objects.filter(project=project).order_by("id"), "", ITEM_COLUMNS)


def validator_rows(project: Project) -> Iterator[dict[str, Any]]:
    for v in validator_figures(project):
        yield {
            "validator": v["validator"],
            "votes": v["votes"],
            "votes_on_resolved_items": v["resolved_votes"],
            "agreement": v["agreement"],
            "median_seconds": v["median_seconds"],
            "qualified": v["qualified"],
            "qualification": v["qualification"],
            "gold_seen": v["gold_seen"],
            "gold_accuracy": v["gold_accuracy"],
            "paused": v["paused"],
        }
