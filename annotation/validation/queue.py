"""The validation queue (SPEC §3D): opening items, and leasing the next item to a validator."""

from datetime import timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, F, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import Example, Lease, Perturbation, Project, ValidationItem, Vote

# No item of a pivot is offered within this many votes after another item of that pivot.
RELATED_GAP = 10


def items_open_for(perturbation: Perturbation) -> ValidationItem:
    """Open the validation item of a submitted perturbation, and keep controls at control_rate."""
    item = ValidationItem.objects.create(
        project=perturbation.project,
        perturbation=perturbation,
        author=perturbation.author,
        fields=perturbation.fields,
        split=perturbation.pivot.split,
        gold_label=perturbation.label,
        gold_answers=perturbation.answers,
    )
    _top_up_controls(perturbation.project, perturbation.pivot)
    return item


def _top_up_controls(project: Project, pivot: Example) -> None:
    """Mix the pivot in as a control while controls stay within control_rate of all items."""
    rate = project.setting("control_rate")
    if rate <= 0 or ValidationItem.objects.filter(control=pivot).exists():
        return
    items = ValidationItem.objects.filter(project=project)
    controls = items.filter(control__isnull=False).count()
    if controls + 1 <= rate * (items.count() + 1) + 1e-9:
        ValidationItem.objects.create(
            project=project,
            control=pivot,
            fields=pivot.fields,
            split=pivot.split,
            gold_label=pivot.label,
            gold_answers=pivot.answers,
        )


def item_close_for(perturbation: Perturbation) -> None:
    ValidationItem.objects.filter(perturbation=perturbation).update(
        status=ValidationItem.Status.CLOSED
    )
    Lease.objects.filter(item__perturbation=perturbation).delete()


def items_left(*, project: Project, validator: Any) -> int:
    """Open items this validator may still label: what their own progress shows. Counted
    as the open items they may take, less the few that others' live leases fill, so that
    no per-item subquery runs over the whole pool."""
    now = timezone.now()
    mine = ValidationItem.objects.filter(project=project, status=ValidationItem.Status.OPEN)
    mine = mine.exclude(author=validator).exclude(votes__validator=validator)
    leased = Lease.objects.filter(item__project=project, expires_at__gt=now).exclude(
        validator=validator
    )
    # A short list (the items others hold leases on), read first: as a subquery inside
    # _open_for's, PostgreSQL planned a nested loop over the pool (11 s at 3,000 open items).
    crowded = list(mine.filter(pk__in=leased.values("item_id")).values_list("pk", flat=True))
    taken = _open_for(project, validator, now).filter(pk__in=crowded).count() if crowded else 0
    return mine.count() - (len(crowded) - taken)


def _candidates(project: Project, validator: Any, now: Any) -> Any:
    """The items to offer next: open for this validator, and none of the same pivot as any of
    their last RELATED_GAP votes. An original served right after its perturbation (or a sibling
    after a sibling) would tell the validator what the edit was."""
    recent = (
        Vote.objects.filter(validator=validator, item__project=project)
        .order_by("-id")
        .values_list("item__perturbation__pivot_id", "item__control_id")[:RELATED_GAP]
    )
    pivots = {pivot or control for pivot, control in recent} - {None}
    candidates = _open_for(project, validator, now)
    if pivots:
        # Two index lookups: one OR across the join would read every item of the project.
        items = ValidationItem.objects.filter(project=project)
        related = [
            *items.filter(control_id__in=pivots).values_list("pk", flat=True),
            *items.filter(perturbation__pivot_id__in=pivots).values_list("pk", flat=True),
        ]
        candidates = candidates.exclude(pk__in=related)
    return candidates


def _open_for(project: Project, validator: Any, now: Any) -> Any:
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
        ValidationItem.objects.filter(project=project, status=ValidationItem.Status.OPEN)
        .exclude(author=validator)
        .exclude(votes__validator=validator)
        .annotate(others=Coalesce(Subquery(others), 0))
        .filter(
            counted_votes__lt=project.setting("votes_per_item") + F("extra_votes") - F("others")
        )
        .order_by("-counted_votes", "created_at", "id")
    )


def next_item(*, project: Project, validator: Any, skip: Any = ()) -> ValidationItem | None:
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
    held = (
        leases.filter(expires_at__gt=now, item__status=ValidationItem.Status.OPEN)
        .select_related("item")
        .first()
    )
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
) -> tuple[bool, ValidationItem | None]:
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
        item = ValidationItem.objects.select_for_update().get(pk=first)
    # A fresh statement sees leases and votes committed while we waited for the row lock.
    if not _open_for(project, validator, now).filter(pk=item.pk).exists():
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
