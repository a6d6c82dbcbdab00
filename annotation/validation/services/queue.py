"""The validation queue (docs/validation.md): opening items, and leasing the next item to a
validator."""

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.crowd import gates
from annotation.crowd import sql as crowd_sql
from annotation.models import Example, GoldItem, Lease, Perturbation, Project, ValidationItem
from annotation.models.validation import public_item_id
from annotation.validation import sql


def items_open_for(perturbation: Perturbation) -> ValidationItem:
    """Open the validation item of a submitted perturbation, and keep controls at control_rate."""
    item = ValidationItem.objects.create(
        id=public_item_id(),
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
            id=public_item_id(),
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


def _params(project: Project, validator: Any, now: Any) -> dict[str, Any]:
    return sql.queue_params(
        project_id=project.pk,
        validator_id=validator.pk,
        votes_per_item=project.setting("votes_per_item"),
        now=now,
    )


def items_left(*, project: Project, validator: Any) -> int:
    """Open items this validator may still label: what their own progress shows, less those
    that others' live leases fill."""
    return sql.items_left(_params(project, validator, timezone.now()))


def next_item(
    *, project: Project, validator: Any, skip: Any = ()
) -> ValidationItem | GoldItem | None:
    """Lease the open item this validator should label next, or None when none is left.

    The crowd gates come first (annotation.crowd.gates): the qualification test's items, or a
    gold item served and not answered; then a live lease of theirs. Otherwise each attempt is
    one transaction: it locks one candidate row (FOR UPDATE SKIP LOCKED on PostgreSQL), then
    re-checks the rules and writes the lease in one fresh statement, which sees the leases and
    votes committed meanwhile. Every lease and vote is written under the item's row lock, so
    no item is assigned beyond its votes. An attempt holds at most one row lock, so validators
    never deadlock one another. At gold_rate, a gold item is served in place of the locked
    item, by one statement where its lease would be written: both take the same statements.
    A validator the gates stopped is served nothing: the queue's statements read it (no
    statement of its own, gates on or off).
    """
    now = timezone.now()
    params = _params(project, validator, now)
    skip = [int(pk) for pk in skip]
    gate = gates.before_queue(project=project, validator=validator, skip=skip)
    if gate.item is not None or gate.stop:
        return gate.item
    if skip:
        Lease.objects.filter(validator=validator, item__in=skip).delete()
    held = sql.held_item(params)
    if held is not None:
        return held
    gold = gates.gold_due(project, gate.status)
    expires = now + timedelta(seconds=project.setting("lease_ttl"))
    for _ in range(10):
        with transaction.atomic():
            settled, item = _lease_one(params, skip, expires, gold=gold)
        if settled:
            return item
    return None


def _lease_one(
    params: dict[str, Any], skip: list[int], expires: Any, *, gold: bool
) -> tuple[bool, ValidationItem | GoldItem | None]:
    """(True, item) or (True, None) when settled; (False, None) when the locked item filled up
    meanwhile and the caller should try again.

    Its commit does not wait for the disk (synchronous_commit off for this transaction alone,
    sent with its first statement): lost in a crash, a lease only lets its item be served again,
    and a vote without a live lease is checked for room, so no item gets more votes than it
    needs."""
    item = sql.choose_candidate(params, skip, wait=False)
    if item is None:
        # Every candidate may be locked by validators being served right now: wait for the
        # best one rather than answer "nothing left" while items remain. Lock that one row by
        # its key: a blocking ORDER BY ... LIMIT scan could lock several and deadlock.
        first = sql.choose_candidate(params, skip, wait=True)
        if first is None:
            return True, None
        item = sql.lock_by_id(first.pk)
        if item is None:  # deleted while this request waited for it: choose again
            return False, None
    if gold:
        served = crowd_sql.serve_gold(
            project_id=params["project"], validator_id=params["validator"]
        )
        if served is not None:
            return True, served
    if not sql.lease(params, item_id=item.pk, expires=expires):
        return False, None
    return True, item


def lease_again(*, project: Project, validator: Any, item: ValidationItem) -> None:
    """After an undo, the item comes back to the validator who took their vote back: their
    other lease gives way, so the page shows this item again (when the rules still allow)."""
    now = timezone.now()
    Lease.objects.filter(validator=validator, item__project=project).exclude(item=item).delete()
    expires = now + timedelta(seconds=project.setting("lease_ttl"))
    sql.lease(_params(project, validator, now), item_id=item.pk, expires=expires)
