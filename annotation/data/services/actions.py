"""The Data page's bulk actions on a selection (POST /api/projects/{slug}/items/bulk/ alike):
delete, send back to validation, accept or reject with a reason, add or remove a tag, on the
rows ticked (`ids`) or on every row that matches the page's filters (`filters`; a delete by
filters names the count it expects, as the page confirmed it). Each is checked whole before
anything changes, answers what it did and what it left (with why), and
goes into the audit log in the same transaction: what is done is always recorded, and a
failure leaves nothing done. Items are locked by id before the validators' counters, as votes
lock them, and the project row never (annotation.validation.services.quality)."""

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.data import selectors
from annotation.data.services.removal import items_delete
from annotation.errors import DomainError
from annotation.models import AuditLog, Lease, Perturbation, Project, ReleaseEntry, ValidationItem
from annotation.validation.services.adjudication import EXTRA_VOTES
from annotation.validation.services.quality import items_send_back
from annotation.validation.services.queue import items_open_for

ACTIONS = ("delete", "send_back", "accept", "reject", "tag", "untag")
MAX_SELECTION = 500  # rows ticked on pages
MAX_MATCHING = 50_000  # rows an action by filters reaches
Status = Perturbation.Status


@dataclass
class Outcome:
    done: int = 0
    # {reason: how many of the selection it left alone}
    left: dict[str, int] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    def leave(self, reason: str, n: int = 1) -> None:
        if n:
            self.left[reason] = self.left.get(reason, 0) + n


def checked_ids(value: Any) -> list[int]:
    if not isinstance(value, list) or not value:
        raise DomainError("ids is a non-empty list of ids.", field="ids")
    if len(value) > MAX_SELECTION:
        raise DomainError(f"Select at most {MAX_SELECTION} rows at a time.", field="ids")
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 < i < 2**63 for i in value):
        raise DomainError("ids is a list of positive whole numbers.", field="ids")
    return sorted(set(value))


def matching_ids(project: Project, kind: str, query: Any) -> list[int]:
    """The ids of every row of `kind` that the filters `query` (the Data page's query
    parameters, as a mapping) let through; an error when none do or too many."""
    if not isinstance(query, dict):
        raise DomainError("filters is an object of the Data page's filters.", field="filters")
    filters = selectors.Filters.parse({**query, "kind": kind})
    qs = selectors.rows(project, filters).order_by()
    ids = list(qs.values_list("pk", flat=True)[: MAX_MATCHING + 1])
    if not ids:
        raise DomainError("No rows match these filters.", field="filters")
    if len(ids) > MAX_MATCHING:
        raise DomainError(
            f"More than {MAX_MATCHING} rows match: narrow the filters.", field="filters"
        )
    return sorted(ids)


def bulk(
    *,
    project: Project,
    actor: Any,
    action: str,
    kind: str,
    ids: Any = None,
    options: dict[str, Any],
    filters: Any = None,
    expected: Any = None,
) -> Outcome:
    """Do `action` on the rows `ids` of `kind` (perturbations or originals), or on every row
    that `filters` matches when they are given: then read in the action's transaction, and a
    delete goes ahead only when `expected` is how many match."""
    if action not in ACTIONS:
        raise DomainError(f"action is one of {', '.join(ACTIONS)}.", field="action")
    if kind not in ("perturbations", "originals"):
        raise DomainError("kind is perturbations or originals.", field="kind")
    if kind != "perturbations" and action != "delete":
        raise DomainError(f"{action} applies to perturbations.", field="kind")
    with transaction.atomic():
        if filters is None:
            chosen = checked_ids(ids)
        else:
            chosen = matching_ids(project, kind, filters)
            _check_expected(action, expected, len(chosen))
        by = {"filters": filters} if filters is not None else {}
        if action == "delete":
            key = "originals" if kind == "originals" else "perturbations"
            removal = items_delete(project=project, actor=actor, **{key: chosen}, **by)
            return Outcome(removal.counts[key], details=removal.summary())
        rows = Perturbation.objects.filter(project=project, pk__in=chosen)
        if action == "send_back":
            outcome = _send_back(rows, clear=bool(options.get("clear_votes")))
        elif action in ("accept", "reject"):
            outcome = _decide(rows, action, _reason(options.get("reason")))
        else:
            outcome = _tag(project, rows, options.get("tag"), add=action == "tag")
        logged = {k: v for k, v in options.items() if k in ("reason", "tag", "clear_votes")}
        AuditLog.record(
            actor=actor,
            action=f"bulk_{action}",
            project=project,
            ids=chosen,
            done=outcome.done,
            left=outcome.left,
            **by,
            **logged,
        )
    return outcome


def _check_expected(action: str, expected: Any, found: int) -> None:
    """A delete by filters deletes the count that was confirmed, or nothing."""
    if action != "delete":
        return
    if expected in (None, ""):
        raise DomainError(
            f"{found} rows match these filters: send expected={found} to delete them.",
            field="expected",
        )
    if str(expected) != str(found):
        raise DomainError(
            f"{found} rows match these filters now, not {expected}: confirm the delete of {found}.",
            field="expected",
            code="conflict",
        )


def _reason(value: Any) -> str:
    reason = value.strip() if isinstance(value, str) else ""
    if not reason:
        raise DomainError("Give a reason: it goes into the audit log.", field="reason")
    return reason[:1000]


def _released(rows: Any) -> set[int]:
    return set(
        ReleaseEntry.objects.filter(perturbation__in=rows).values_list("perturbation_id", flat=True)
    )


def _send_back(rows: Any, *, clear: bool) -> Outcome:
    """In the caller's transaction: the rows' items locked first (by id), so that the statuses
    read are those that votes cannot change any more; then every item sent back at once."""
    outcome = Outcome()
    released = _released(rows)
    items = ValidationItem.objects.select_for_update().filter(perturbation__in=rows)
    list(items.order_by("pk").values_list("pk"))
    again = []
    for p in rows.select_related("project", "pivot", "item").order_by("pk"):
        if p.pk in released:
            outcome.leave("in a published release")
        elif p.status in (Status.DRAFT, Status.WITHDRAWN):
            outcome.leave(f"{p.status}, not submitted")
        elif not hasattr(p, "item"):  # imported as accepted: never validated here
            Perturbation.objects.filter(pk=p.pk).update(status=Status.SUBMITTED, resolved_at=None)
            p.status = Status.SUBMITTED
            items_open_for(p)
            outcome.done += 1
        elif p.status == Status.SUBMITTED and not clear:
            outcome.leave("already waiting for votes")
        else:
            again.append(p.item.pk)
    items_send_back(item_ids=again, clear_votes=clear, extra_votes=EXTRA_VOTES)
    outcome.done += len(again)
    return outcome


def _decide(rows: Any, decision: str, reason: str) -> Outcome:
    """An admin's decision on perturbations whatever their votes say: accepted ones are
    released under their majority label (their own when there is none)."""
    outcome = Outcome()
    released = _released(rows)
    status = Status.ACCEPTED if decision == "accept" else Status.REJECTED
    with transaction.atomic():
        items = ValidationItem.objects.select_for_update().filter(perturbation__in=rows)
        list(items.order_by("pk").values_list("pk"))
        for p in rows.select_for_update().order_by("pk"):
            if p.pk in released:
                outcome.leave("in a published release")
            elif p.status in (Status.DRAFT, Status.WITHDRAWN):
                outcome.leave(f"{p.status}, not submitted")
            elif p.status == status:
                outcome.leave(f"already {status}")
            else:
                p.status = status
                p.resolved_at = p.resolved_at or timezone.now()
                p.save(update_fields=["status", "resolved_at"])
                outcome.done += 1
        # Open items leave the queue: the decision is made.
        open_items = items.filter(status=ValidationItem.Status.OPEN, perturbation__status=status)
        Lease.objects.filter(item__in=open_items).delete()
        open_items.update(status=ValidationItem.Status.CLOSED)
    outcome.details["reason"] = reason
    return outcome


def _tag(project: Project, rows: Any, name: Any, *, add: bool) -> Outcome:
    """In the caller's transaction: the rows locked first (by id; FOR NO KEY UPDATE, which
    the keys of votes and revisions do not wait for), so that two tags of the same rows at
    once take turns, and the second reads the pairs the first wrote (it inserted them again:
    500 on the pair's key, and no audit entry)."""
    tag = project.tags.filter(name=name).first() if isinstance(name, str) else None
    if tag is None:
        raise DomainError("Choose a tag: one of the project's tags.", field="tag")
    list(rows.select_for_update(no_key=True).order_by("pk").values_list("pk"))
    through = Perturbation.tags.through
    have = set(
        through.objects.filter(perturbation__in=rows, tag=tag).values_list(
            "perturbation_id", flat=True
        )
    )
    ids = list(rows.values_list("pk", flat=True))
    if add:
        new = [through(perturbation_id=pk, tag_id=tag.pk) for pk in ids if pk not in have]
        through.objects.bulk_create(new)
        outcome = Outcome(len(new))
        outcome.leave("already tagged", len(ids) - len(new))
    else:
        through.objects.filter(perturbation_id__in=ids, tag=tag).delete()
        outcome = Outcome(len(have))
        outcome.leave("not tagged", len(ids) - len(have))
    return outcome
