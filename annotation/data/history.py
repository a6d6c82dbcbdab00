"""One row's story, oldest first: the import that brought it, its edits, every vote (validator
and time), its resolution and every admin decision on it (the audit log)."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404

from annotation.data import records
from annotation.models import AuditLog, Example, Perturbation, ValidationItem, Vote
from annotation.text.answers import answer_text
from annotation.validation.resolution import free_text_outcome, resolution_status


@dataclass(frozen=True)
class Event:
    at: datetime | None
    who: str
    what: str
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"at": self.at, "who": self.who, "what": self.what, "detail": self.detail}


def _name(user: Any) -> str:
    return user.username if user is not None else "command line"


def _imported(row: Example | Perturbation) -> list[Event]:
    batch = row.batch
    if batch is None:
        return []
    return [
        Event(
            batch.created_at,
            _name(batch.created_by),
            "imported",
            f"{batch.source_name} (import {batch.pk})",
        )
    ]


def _votes(item: ValidationItem | None, names: bool) -> list[Event]:
    """Every vote on the item; who cast it only for admins (`names`): an expert sees that
    their edit was voted on, not by whom."""
    if item is None:
        return []
    votes = Vote.objects.filter(item=item).select_related("validator").order_by("created_at", "id")
    return [
        Event(
            v.created_at,
            v.validator.username if names else "a validator",
            "voted",
            (v.label or v.answer)
            + ("" if v.counts else " (not counted: unqualified)")
            + (f" · flags: {', '.join(v.flags)}" if v.flags else ""),
        )
        for v in votes
    ]


def _decisions(project_id: int, pk: int) -> list[Event]:
    """Admin decisions on one perturbation, and the bulk actions whose selection held it and
    that changed something (a few hundred at most in a project's life, read whole)."""
    log = AuditLog.objects.filter(project_id=project_id).select_related("actor")
    rows = [*log.filter(details__perturbation=pk)] + [
        a
        for a in log.filter(action__startswith="bulk_")
        if pk in a.details.get("ids", []) and a.details.get("done")
    ]
    hidden = ("perturbation", "ids", "done", "left")
    return [
        Event(
            a.created_at,
            _name(a.actor),
            a.action.removeprefix("bulk_").replace("_", " "),
            ", ".join(
                f"{k}: {v}"
                for k, v in a.details.items()
                if k not in hidden and v not in ("", None, False)
            ),
        )
        for a in rows
    ]


def _sorted(events: list[Event]) -> list[Event]:
    return sorted(events, key=lambda e: (e.at is None, e.at or datetime.min))


def _brought(p: Perturbation) -> list[Event]:
    """A perturbation a set import brought: the import, and whether it came accepted (as a
    published set does) or went to validation."""
    batch = p.batch
    assert batch is not None
    entry = AuditLog.objects.filter(
        project_id=p.project_id, action="sets_imported", details__batch=batch.pk
    ).first()
    accepted = entry.details.get("accepted") if entry else not hasattr(p, "item")
    where = f"{batch.source_name} (import {batch.pk})"
    if p.batch_id == p.pivot.batch_id:
        where += ", with its original"
    how = "accepted as imported, without validation" if accepted else "sent to validation"
    return [Event(batch.created_at, _name(batch.created_by), "imported", f"{where}; {how}")]


def _resolution(p: Perturbation, item: ValidationItem) -> Event:
    """What the validators decided, read from the item (the perturbation's status may have
    changed since, by an admin's decision that follows in the story)."""
    project = p.project
    if project.is_free_text:
        outcome = free_text_outcome(item, project)
        status, chosen = outcome.status, " · ".join(answer_text(a) for a in outcome.answers)
        chosen = chosen or outcome.label
    else:
        chosen = item.majority_label
        status = resolution_status(chosen, item.gold_label, project.labels)
    said = f"majority {chosen}" if chosen else "no majority"
    return Event(
        item.resolved_at, "validation", "resolved", f"{said}, so {status}".replace("_", " ")
    )


def perturbation_history(p: Perturbation, names: bool = True) -> list[Event]:
    brought = p.batch is not None and p.batch.kind == "sets"  # a set import brought it
    if brought:
        events = [] if p.batch_id == p.pivot.batch_id else _imported(p.pivot)
        events += _brought(p)
    else:
        events = _imported(p.pivot)
        events.append(Event(p.created_at, _name(p.author), "written"))
    for r in p.revisions.all():
        events.append(Event(r.created_at, _name(p.author), f"revision {r.number} kept"))
    if p.submitted_at and not brought:
        events.append(Event(p.submitted_at, _name(p.author), "submitted"))
    item = getattr(p, "item", None)
    events += _votes(item, names)
    if item is not None and item.resolved_at:
        events.append(_resolution(p, item))
    events += _decisions(p.project_id, p.pk)
    return _sorted(events)


def original_history(example: Example, names: bool = True) -> list[Event]:
    events = _imported(example)
    item = getattr(example, "control_item", None)
    if item is not None:
        events.append(Event(item.created_at, "validation", "mixed in as a control"))
        events += _votes(item, names)
    return _sorted(events)


@dataclass
class Story:
    """One row as its page and GET …/items/{id}/ show it."""

    row: Any
    record: dict[str, Any]
    events: list[Event]
    related: list[dict[str, Any]]  # an original's perturbations (those the reader may see)


def story_of(project: Any, kind: str, pk: int, mine: Any) -> Story:
    """The row `pk` of `kind`, for a reader who sees everything (`mine` None) or only their own
    perturbations and the originals under them; 404 for anything else."""
    if kind not in ("originals", "perturbations"):
        raise Http404("kind is perturbations or originals.")
    if kind == "originals":
        originals = records.original_records(project.examples.all(), mine)
        original = get_object_or_404(originals, pk=pk)
        every = original.perturbations.all()
        theirs = every if mine is None else every.filter(author=mine)
        if mine is not None and not theirs.exists():
            raise Http404("No such row.")
        related = records.records("perturbations", list(records.perturbation_records(theirs)))
        events = original_history(original, names=mine is None)
        return Story(original, records.original_record(original), events, related)
    qs = records.perturbation_records(project.perturbations.all())
    p = get_object_or_404(qs if mine is None else qs.filter(author=mine), pk=pk)
    return Story(p, records.perturbation_record(p), perturbation_history(p, mine is None), [])
