"""Blind five-way validation (SPEC §3D): the queue, votes, resolution and validator quality."""

from collections import Counter
from datetime import timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, F, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.audit import audit
from annotation.models import (
    Example,
    Lease,
    Perturbation,
    Project,
    Release,
    ValidationItem,
    ValidatorStatus,
    Vote,
)

Item = ValidationItem
FLAGS = [choice for choice, _ in Vote.Flag.choices]


class VoteError(Exception):
    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


# Items -----------------------------------------------------------------------------------------


def items_open_for(perturbation: Perturbation) -> Item:
    """Open the validation item of a submitted perturbation, and keep controls at control_rate."""
    item = Item.objects.create(
        project=perturbation.project,
        perturbation=perturbation,
        author=perturbation.author,
        fields=perturbation.fields,
        split=perturbation.pivot.split,
        gold_label=perturbation.label,
    )
    _top_up_controls(perturbation.project, perturbation.pivot)
    return item


def _top_up_controls(project: Project, pivot: Example) -> None:
    """Mix the pivot in as a control while controls stay within control_rate of all items."""
    rate = project.setting("control_rate")
    if rate <= 0 or Item.objects.filter(control=pivot).exists():
        return
    items = Item.objects.filter(project=project)
    controls = items.filter(control__isnull=False).count()
    if controls + 1 <= rate * (items.count() + 1) + 1e-9:
        Item.objects.create(
            project=project,
            control=pivot,
            fields=pivot.fields,
            split=pivot.split,
            gold_label=pivot.label,
        )


def item_close_for(perturbation: Perturbation) -> None:
    Item.objects.filter(perturbation=perturbation).update(status=Item.Status.CLOSED)
    Lease.objects.filter(item__perturbation=perturbation).delete()


# The queue -------------------------------------------------------------------------------------


def _candidates(project: Project, validator: Any, now: Any) -> Any:
    """Open items this validator may take: not their own, not voted on, and with capacity."""
    others = (
        Lease.objects.filter(item=OuterRef("pk"), expires_at__gt=now)
        .exclude(validator=validator)
        .order_by()
        .values("item")
        .annotate(n=Count("id"))
        .values("n")[:1]
    )
    return (
        Item.objects.filter(project=project, status=Item.Status.OPEN)
        .exclude(author=validator)
        .exclude(votes__validator=validator)
        .annotate(others=Coalesce(Subquery(others), 0))
        .filter(counted_votes__lt=project.setting("votes_per_item") - F("others"))
        .order_by("-counted_votes", "created_at", "id")
    )


def next_item(*, project: Project, validator: Any, skip: Any = ()) -> Item | None:
    """Lease the open item this validator should label next, or None when none is left.

    Prefers items closest to completion, then the oldest. Each attempt is one transaction: it
    locks one candidate row (FOR UPDATE SKIP LOCKED on PostgreSQL), checks its capacity again in
    a fresh statement, and writes the lease under that lock. Every lease and vote is written
    under the item's row lock, so no item is assigned beyond votes_per_item. An attempt holds
    at most one row lock, so validators never deadlock one another.
    """
    now = timezone.now()
    leases = Lease.objects.filter(validator=validator, item__project=project)
    if skip:
        leases.filter(item__in=list(skip)).delete()
    held = leases.filter(expires_at__gt=now, item__status="open").select_related("item").first()
    if held is not None:
        return held.item
    for _ in range(10):
        with transaction.atomic():
            settled, item = _lease_one(project, validator, now, list(skip))
        if settled:
            return item
    return None


def _lease_one(
    project: Project, validator: Any, now: Any, skip: list[int]
) -> tuple[bool, Item | None]:
    """(True, item) or (True, None) when settled; (False, None) when the locked item filled up
    meanwhile and the caller should try again."""
    candidates = _candidates(project, validator, now).exclude(pk__in=skip)
    skip_locked = connection.features.has_select_for_update_skip_locked
    item = candidates.select_for_update(skip_locked=skip_locked).first()
    if item is None:
        # Every candidate may be locked by validators being served right now: wait for the
        # best one rather than answer "nothing left" while items remain. Lock that one row by
        # its key: a blocking ORDER BY ... LIMIT scan could lock several and deadlock.
        first = candidates.values_list("pk", flat=True).first()
        if first is None:
            return True, None
        item = Item.objects.select_for_update().get(pk=first)
    # A fresh statement sees leases and votes committed while we waited for the row lock.
    if not _candidates(project, validator, now).filter(pk=item.pk).exists():
        return False, None
    # One statement: replaces this validator's expired lease on the item, if any.
    Lease.objects.bulk_create(
        [
            Lease(
                item=item,
                validator=validator,
                expires_at=now + timedelta(seconds=project.setting("lease_ttl")),
            )
        ],
        update_conflicts=True,
        unique_fields=["item", "validator"],
        update_fields=["expires_at"],
    )
    return True, item


# Votes -----------------------------------------------------------------------------------------


def _validator_counts(project: Project, validator: Any) -> bool:
    return not ValidatorStatus.objects.filter(
        project=project, validator=validator, qualified=False
    ).exists()


def vote_cast(
    *,
    item: Item,
    validator: Any,
    label: str,
    flags: Any = (),
    seconds_spent: Any = 0,
) -> tuple[Vote, bool]:
    """Record a vote; returns (vote, created). A repeat of the same vote is not an error.

    The vote and any resolution commit first, under the item's row lock; the voters' agreement
    counts are then updated in their own short transaction, so that the item's lock is never
    held while waiting for other validators' counters."""
    vote, created, resolved = _vote_and_resolve(
        item=item, validator=validator, label=label, flags=flags, seconds_spent=seconds_spent
    )
    if resolved is not None:
        with transaction.atomic():
            _count_resolution(resolved, +1)
    return vote, created


@transaction.atomic
def _vote_and_resolve(
    *,
    item: Item,
    validator: Any,
    label: str,
    flags: Any = (),
    seconds_spent: Any = 0,
) -> tuple[Vote, bool, Item | None]:
    item = Item.objects.select_for_update().select_related("project").get(pk=item.pk)
    project = item.project
    if item.author_id == validator.pk:
        raise VoteError("You cannot validate your own perturbation.", status=403)
    flags = sorted(set(flags or []))
    existing = Vote.objects.filter(item=item, validator=validator).first()
    if existing is not None:
        if existing.label == label and sorted(existing.flags) == flags:
            return existing, False, None
        raise VoteError(
            "You already voted on this item with a different answer; votes cannot change.",
            status=409,
        )
    if label not in project.all_labels:
        raise VoteError(f"Unknown label {label!r}; choose one of {', '.join(project.all_labels)}.")
    unknown = [f for f in flags if f not in FLAGS]
    if unknown:
        raise VoteError(f"Unknown flag {unknown[0]!r}; flags are {', '.join(FLAGS)}.")
    try:
        seconds = max(0, int(seconds_spent or 0))
    except (TypeError, ValueError):
        raise VoteError("seconds_spent must be a number.") from None
    if item.status != Item.Status.OPEN:
        raise VoteError("This item is no longer open for votes.", status=409)
    now = timezone.now()
    has_lease = Lease.objects.filter(item=item, validator=validator, expires_at__gt=now).exists()
    if not has_lease:
        others = Lease.objects.filter(item=item, expires_at__gt=now).count()
        if item.counted_votes + others >= project.setting("votes_per_item"):
            raise VoteError(
                "This item has all the votes it needs; fetch the next item instead.", status=409
            )
    counts = _validator_counts(project, validator)
    vote = Vote.objects.create(
        item=item,
        validator=validator,
        label=label,
        flags=flags,
        seconds_spent=seconds,
        guideline_version=project.current_guideline_version(),
        counts=counts,
    )
    Lease.objects.filter(item=item, validator=validator).delete()
    if counts:
        item.counted_votes += 1
        item.save(update_fields=["counted_votes"])
        if item.counted_votes >= project.setting("votes_per_item"):
            item_resolve(item=item)
            return vote, True, item
    return vote, True, None


def majority_of(labels: list[str], majority: int) -> str:
    """The label chosen at least `majority` times, or "" if there is none."""
    if not labels:
        return ""
    label, n = Counter(labels).most_common(1)[0]
    return label if n >= majority else ""


def item_resolve(*, item: Item) -> None:
    """Resolve an item whose counted votes reached votes_per_item (SPEC §3D)."""
    project = item.project
    labels = list(item.votes.filter(counts=True).values_list("label", flat=True))
    item.majority_label = majority_of(labels, project.setting("majority"))
    item.status = Item.Status.RESOLVED
    item.resolved_at = timezone.now()
    item.save(update_fields=["majority_label", "status", "resolved_at"])
    Lease.objects.filter(item=item).delete()
    if item.perturbation_id is not None:
        perturbation = Perturbation.objects.select_for_update().get(pk=item.perturbation_id)
        perturbation.status = resolution_status(
            item.majority_label, perturbation.label, project.labels
        )
        perturbation.majority_label = item.majority_label
        perturbation.resolved_at = item.resolved_at
        perturbation.save(update_fields=["status", "majority_label", "resolved_at"])


def _count_resolution(item: Item, sign: int) -> None:
    """Add (sign=+1) or remove (-1) an item's resolution from its voters' running agreement
    counts, then unqualify any who now fail the project's bar."""
    votes = list(item.votes.values_list("validator_id", "label"))
    voters = sorted(validator_id for validator_id, _ in votes)
    agreeing = [v for v, label in votes if label == item.majority_label]
    ValidatorStatus.objects.bulk_create(
        [ValidatorStatus(project=item.project, validator_id=v) for v in voters],
        ignore_conflicts=True,
    )
    statuses = ValidatorStatus.objects.filter(project=item.project, validator_id__in=voters)
    # Lock in one order, so that concurrent resolutions never deadlock.
    list(statuses.select_for_update().order_by("validator_id").values_list("id"))
    statuses.update(resolved_votes=F("resolved_votes") + sign)
    statuses.filter(validator_id__in=agreeing).update(agreed_votes=F("agreed_votes") + sign)
    if sign > 0:
        validators_check_quality(project=item.project, statuses=statuses)


def resolution_status(majority: str, intended: str, task_labels: list[str]) -> str:
    if majority == intended:
        return Perturbation.Status.ACCEPTED
    if majority in task_labels:
        return Perturbation.Status.DISPUTED
    return Perturbation.Status.NO_MAJORITY


# Validator quality -----------------------------------------------------------------------------


def validators_check_quality(*, project: Project, statuses: Any) -> None:
    """Unqualify validators who disagreed with the majority too often (SPEC §3D). A validator
    already unqualified, or requalified by an admin, keeps that decision."""
    min_votes = project.setting("validator_min_votes")
    max_disagreement = project.setting("validator_max_disagreement")
    failing = statuses.filter(
        qualified=True, changed_by__isnull=True, resolved_votes__gte=max(min_votes, 1)
    ).values_list("validator_id", "resolved_votes", "agreed_votes")
    for validator_id, n, agreed in list(failing):
        if 1 - agreed / n > max_disagreement:
            validator_set_qualified(
                project=project,
                validator_id=validator_id,
                qualified=False,
                actor=None,
                agreement=agreed / n,
            )


@transaction.atomic
def validator_set_qualified(
    *,
    project: Project,
    validator_id: int,
    qualified: bool,
    actor: Any,
    agreement: float | None = None,
) -> None:
    """Make a validator's votes count or not, and reopen or re-resolve the affected items."""
    ValidatorStatus.objects.update_or_create(
        project=project,
        validator_id=validator_id,
        defaults={
            "qualified": qualified,
            "agreement": agreement,
            "changed_at": timezone.now(),
            "changed_by": actor if actor is not None and actor.is_authenticated else None,
        },
    )
    votes = Vote.objects.filter(item__project=project, validator_id=validator_id)
    affected = list(votes.exclude(counts=qualified).values_list("item_id", flat=True))
    votes.update(counts=qualified)
    for item in Item.objects.select_for_update().filter(pk__in=affected).order_by("pk"):
        _recount(item)
    audit(
        actor=actor,
        action="validator_requalified" if qualified else "validator_unqualified",
        project=project,
        validator=validator_id,
        agreement=agreement,
        items=len(affected),
    )


def _recount(item: Item) -> None:
    """Bring an item in line with its counted votes after a qualification change."""
    project = item.project
    item.counted_votes = item.votes.filter(counts=True).count()
    needed = project.setting("votes_per_item")
    released = item.perturbation_id is not None and item_is_released(item)
    if item.status == Item.Status.RESOLVED and item.counted_votes < needed and not released:
        _count_resolution(item, -1)
        item.status = Item.Status.OPEN
        item.majority_label = ""
        item.resolved_at = None
        if item.perturbation_id is not None:
            Perturbation.objects.filter(pk=item.perturbation_id).update(
                status=Perturbation.Status.SUBMITTED, majority_label="", resolved_at=None
            )
    item.save(update_fields=["counted_votes", "status", "majority_label", "resolved_at"])
    if item.status == Item.Status.OPEN and item.counted_votes >= needed:
        item_resolve(item=item)
        _count_resolution(item, +1)


def item_is_released(item: Item) -> bool:
    """Released perturbations keep their resolution: a release never changes."""
    return Release.objects.filter(perturbations__item=item).exists()


# Adjudication ----------------------------------------------------------------------------------


class AdjudicationError(Exception):
    pass


@transaction.atomic
def perturbation_adjudicate(
    *, perturbation: Perturbation, admin: Any, decision: str
) -> Perturbation:
    """Accept a disputed perturbation under its majority label, or reject it."""
    perturbation = Perturbation.objects.select_for_update().get(pk=perturbation.pk)
    if perturbation.status != Perturbation.Status.DISPUTED:
        raise AdjudicationError(
            f"Only disputed perturbations can be adjudicated; this one is {perturbation.status}."
        )
    if decision not in ("accept", "reject"):
        raise AdjudicationError("decision must be accept or reject.")
    perturbation.status = (
        Perturbation.Status.ACCEPTED if decision == "accept" else Perturbation.Status.REJECTED
    )
    perturbation.save(update_fields=["status"])
    audit(
        actor=admin,
        action="adjudicated",
        project=perturbation.project,
        perturbation=perturbation.pk,
        decision=decision,
        intended_label=perturbation.label,
        majority_label=perturbation.majority_label,
    )
    return perturbation
