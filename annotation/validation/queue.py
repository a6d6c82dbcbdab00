"""The validation queue (SPEC §3D): opening items, and leasing the next item to a validator."""

from datetime import timedelta
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from annotation.models import Example, Lease, Perturbation, Project, ValidationItem
from annotation.prepared import Statement, fetch

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


# The queue's rules, as SQL fragments over the item `i`, so that choosing an item and checking
# it again under its row lock read the same rule. Hand-written: the queue runs on every vote,
# and building these queries through the ORM cost more CPU than running them.
_OPEN = """
    i.project_id = %(project)s AND i.status = 'open'
    AND (i.author_id IS NULL OR i.author_id <> %(validator)s)"""
# Open, and not voted on by this validator. Choosing the next item reads it as a count per
# candidate, one probe of the (item, validator) unique index: as NOT EXISTS, PostgreSQL plans an
# anti-join from the validator's votes, which its statistics underestimate for a validator who
# just started (41 ms at 750 votes). Counting the whole pool, the anti-join is the fast way.
_MINE = f"""{_OPEN}
    AND (SELECT count(*) FROM annotation_vote v
         WHERE v.item_id = i.id AND v.validator_id = %(validator)s) = 0"""
_MINE_ALL = f"""{_OPEN}
    AND NOT EXISTS (SELECT 1 FROM annotation_vote v
                    WHERE v.item_id = i.id AND v.validator_id = %(validator)s)"""
# Room beside the live leases of other validators.
_ROOM = """
    i.counted_votes + (SELECT count(*) FROM annotation_lease l
                       WHERE l.item_id = i.id AND l.expires_at > %(now)s
                         AND l.validator_id <> %(validator)s)
      < %(votes_per_item)s + i.extra_votes"""
# No item of a pivot of the validator's last RELATED_GAP votes: an original served right after
# its perturbation (or a sibling after a sibling) would tell them what the edit was.
_RECENT = f"""
    WITH recent AS (
        SELECT COALESCE(p.pivot_id, ri.control_id) AS pivot
        FROM annotation_vote rv
        JOIN annotation_validationitem ri ON ri.id = rv.item_id
        LEFT JOIN annotation_perturbation p ON p.id = ri.perturbation_id
        WHERE rv.validator_id = %(validator)s AND ri.project_id = %(project)s
        ORDER BY rv.id DESC LIMIT {RELATED_GAP})"""
_UNRELATED = """
    NOT EXISTS (SELECT 1 FROM recent r WHERE r.pivot = i.control_id)
    AND NOT EXISTS (SELECT 1 FROM annotation_perturbation pp JOIN recent r ON r.pivot = pp.pivot_id
                    WHERE pp.id = i.perturbation_id)"""
# Prefers items closest to completion, then the oldest (the item_queue index's order).
_ORDER = "ORDER BY i.counted_votes DESC, i.created_at, i.id"


def _params(project: Project, validator: Any, now: Any) -> dict[str, Any]:
    return {
        "project": project.pk,
        "validator": validator.pk,
        "now": connection.ops.adapt_datetimefield_value(now),
        "votes_per_item": project.setting("votes_per_item"),
    }


_TYPES = {"project": "bigint", "validator": "integer", "now": "timestamptz"}
_ROOM_TYPES = {**_TYPES, "votes_per_item": "integer"}
# A live lease of this validator's comes first.
_HELD = Statement(
    "queue_held",
    """SELECT i.* FROM annotation_validationitem i
       JOIN annotation_lease l ON l.item_id = i.id
       WHERE l.validator_id = %(validator)s AND i.project_id = %(project)s
         AND l.expires_at > %(now)s AND i.status = 'open'
       ORDER BY l.id LIMIT 1""",
    **_TYPES,
)
_CANDIDATES = f"""{_RECENT}
    SELECT i.* FROM annotation_validationitem i
    WHERE {_MINE} AND {_ROOM} AND {_UNRELATED}"""
# The best candidate that no one else is being served right now.
_CHOOSE = Statement(
    "queue_choose", f"{_CANDIDATES} {_ORDER} LIMIT 1", lock="FOR UPDATE SKIP LOCKED", **_ROOM_TYPES
)
# One fresh statement re-checks the rules and writes the lease (replacing this validator's
# expired one on the item, if any).
_LEASE = Statement(
    "queue_lease",
    f"""INSERT INTO annotation_lease (item_id, validator_id, expires_at)
        SELECT i.id, %(validator)s, %(expires)s FROM annotation_validationitem i
        WHERE i.id = %(item)s AND {_MINE} AND {_ROOM}
        ON CONFLICT (item_id, validator_id) DO UPDATE SET expires_at = excluded.expires_at
        RETURNING item_id""",
    **_ROOM_TYPES,
    expires="timestamptz",
    item="bigint",
)


def items_left(*, project: Project, validator: Any) -> int:
    """Open items this validator may still label: what their own progress shows. Counted as
    the open items they may take, less those that others' live leases fill: a short list, read
    by the leases' side, so that no lease count runs for every item of the pool."""
    params = _params(project, validator, timezone.now())
    full = f"""
        SELECT count(*) FROM annotation_validationitem i
        WHERE i.id IN (SELECT l.item_id FROM annotation_lease l
                       WHERE l.expires_at > %(now)s AND l.validator_id <> %(validator)s)
          AND {_MINE} AND NOT ({_ROOM})"""
    with connection.cursor() as cursor:
        pool = f"SELECT count(*) FROM annotation_validationitem i WHERE {_MINE_ALL}"
        cursor.execute(pool, params)
        mine = cursor.fetchone()[0]
        cursor.execute(full, params)
        return int(mine - cursor.fetchone()[0])


def next_item(*, project: Project, validator: Any, skip: Any = ()) -> ValidationItem | None:
    """Lease the open item this validator should label next, or None when none is left.

    A live lease of theirs comes first. Otherwise each attempt is one transaction: it locks one
    candidate row (FOR UPDATE SKIP LOCKED on PostgreSQL), then re-checks the rules and writes
    the lease in one fresh statement, which sees the leases and votes committed meanwhile. Every
    lease and vote is written under the item's row lock, so no item is assigned beyond its
    votes. An attempt holds at most one row lock, so validators never deadlock one another.
    """
    now = timezone.now()
    params = _params(project, validator, now)
    skip = [int(pk) for pk in skip]
    if skip:
        Lease.objects.filter(validator=validator, item__in=skip).delete()
    for leased in fetch(ValidationItem, *_HELD.bind(params)):
        return leased
    params["expires"] = connection.ops.adapt_datetimefield_value(
        now + timedelta(seconds=project.setting("lease_ttl"))
    )
    for _ in range(10):
        with transaction.atomic():
            settled, item = _lease_one(params, skip)
        if settled:
            return item
    return None


def _lease_one(params: dict[str, Any], skip: list[int]) -> tuple[bool, ValidationItem | None]:
    """(True, item) or (True, None) when settled; (False, None) when the locked item filled up
    meanwhile and the caller should try again."""
    skipped = f"AND i.id NOT IN ({', '.join(map(str, skip))})" if skip else ""
    candidates = f"{_CANDIDATES} {skipped} {_ORDER} LIMIT 1"
    # The prepared statement serves the usual case; skipping (the page's Skip) is rare.
    choose = (candidates + _CHOOSE.lock_clause(), params) if skip else _CHOOSE.bind(params)
    item = next(iter(fetch(ValidationItem, *choose)), None)
    if item is None:
        # Every candidate may be locked by validators being served right now: wait for the
        # best one rather than answer "nothing left" while items remain. Lock that one row by
        # its key: a blocking ORDER BY ... LIMIT scan could lock several and deadlock.
        first = next(iter(fetch(ValidationItem, candidates, params)), None)
        if first is None:
            return True, None
        lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
        by_key = "SELECT i.* FROM annotation_validationitem i WHERE i.id = %(item)s"
        item = fetch(ValidationItem, by_key + lock, {"item": first.pk})[0]
    with connection.cursor() as cursor:
        cursor.execute(*_LEASE.bind({**params, "item": item.pk}))
        if cursor.fetchone() is None:
            return False, None
    return True, item
