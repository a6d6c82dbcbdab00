"""The validation hot path's hand-written statements: casting a vote, resolving its item,
counting it for the voters, and leasing the next item. Each has a named function; services call
these and never hold a cursor.

Why by hand: every vote runs them all, and building them through the ORM cost more CPU than
running them (docs/performance.md; `benchmarks/hot_path_profile.py` lists them per cycle and
`benchmarks/validation_load.py` measures the whole path). Table names come from the models.
"""

from datetime import datetime
from typing import Any

from django.db import connection

from annotation.models import (
    Guidelines,
    Lease,
    Perturbation,
    ValidationItem,
    ValidatorStatus,
    Vote,
)
from annotation.sql import Statement, fetch

ITEM = ValidationItem._meta.db_table
VOTE = Vote._meta.db_table
LEASE = Lease._meta.db_table
STATUS = ValidatorStatus._meta.db_table
PERTURBATION = Perturbation._meta.db_table
GUIDELINES = Guidelines._meta.db_table
# No item of a pivot is offered within this many votes after another item of that pivot.
RELATED_GAP = 10


def _time(value: datetime) -> Any:
    return connection.ops.adapt_datetimefield_value(value)


def _run(statement: Statement, **params: Any) -> Any:
    """Run `statement`; returns its cursor's rows."""
    with connection.cursor() as cursor:
        cursor.execute(*statement.bind(params))
        return cursor.fetchall() if cursor.description else []


# Casting a vote ----------------------------------------------------------------------------

# The item, locked, with the project's guideline version.
_LOCK = Statement(
    "vote_lock",
    f"""SELECT i.*, (SELECT max(g.version) FROM {GUIDELINES} g
                     WHERE g.project_id = i.project_id) AS guideline_version
        FROM {ITEM} i WHERE i.id = %(item)s AND i.project_id = %(project)s""",
    lock="FOR UPDATE",
    item="bigint",
    project="bigint",
)
# What this validator already has on the item, the other validators' live leases, and whether
# their votes count: read in a fresh statement once the lock is held, so that it sees what
# committed before. On PostgreSQL the same round trip drops their lease on it (rolled back with
# the vote if it is refused), and says whether a live one was there. Their status row is read
# once (a join, not a subquery per column): every resolution rewrites it, so until a vacuum
# each lookup walks its dead versions (docs/performance.md).
_STATE_COLUMNS = f"""SELECT (SELECT v.id FROM {VOTE} v
                WHERE v.item_id = %(item)s AND v.validator_id = %(validator)s),
               (SELECT count(*) FROM {LEASE} l WHERE l.item_id = %(item)s
                AND l.validator_id <> %(validator)s AND l.expires_at > %(now)s),
               s.qualified IS NOT FALSE,
               CASE WHEN s.paused THEN 'paused' ELSE s.qualification END"""
_STATE_FROM = f"""FROM (SELECT 1) AS one LEFT JOIN {STATUS} s
                ON s.project_id = %(project)s AND s.validator_id = %(validator)s"""
_STATE_READ = f"{_STATE_COLUMNS} {_STATE_FROM}"
_UNLEASE_SQL = f"""DELETE FROM {LEASE} WHERE item_id = %(item)s AND validator_id = %(validator)s
    RETURNING expires_at > %(now)s AS live"""
_MINE_NOW = {"item": "bigint", "validator": "integer", "now": "timestamptz"}
_STATE = Statement(
    "vote_state",
    f"WITH mine AS ({_UNLEASE_SQL}) {_STATE_COLUMNS}, (SELECT bool_or(live) FROM mine)"
    f" {_STATE_FROM}",
    **_MINE_NOW,
    project="bigint",
)
_STATE_ELSEWHERE = Statement("vote_state_read", _STATE_READ, **_MINE_NOW, project="bigint")
_UNLEASE = Statement("vote_unlease", _UNLEASE_SQL, **_MINE_NOW)  # SQLite: no DELETE in WITH
_INSERT = Statement(
    "vote_insert",
    f"""INSERT INTO {VOTE} (item_id, validator_id, label, answer, flags, seconds_spent,
                           guideline_version, counts, created_at)
        VALUES (%(item)s, %(validator)s, %(label)s, %(answer)s, %(flags)s, %(seconds)s,
                %(guideline)s, %(counts)s, %(now)s)
        RETURNING id""",
    item="bigint",
    validator="integer",
    label="text",
    answer="text",
    flags="jsonb",
    seconds="integer",
    guideline="integer",
    counts="boolean",
    now="timestamptz",
)
_COUNT = Statement(
    "vote_count",
    f"UPDATE {ITEM} SET counted_votes = %(n)s, label_votes = %(labels)s WHERE id = %(item)s",
    n="integer",
    labels="jsonb",
    item="bigint",
)


def lock_item(*, project_id: int, item_id: int) -> ValidationItem | None:
    """The item, locked until the transaction ends, with `guideline_version` set; None when it
    is not an item of the project."""
    rows = fetch(ValidationItem, *_LOCK.bind({"item": item_id, "project": project_id}))
    return rows[0] if rows else None


def vote_state(
    *, project_id: int, item_id: int, validator_id: int, now: datetime
) -> tuple[int | None, int, bool, str, bool]:
    """(this validator's vote on the item or None, the other validators' live leases on it,
    whether this validator's votes count, their crowd gate: "paused", or their qualification
    test's outcome, "" when they have not passed it; and whether they held a live lease on
    it, which is dropped)."""
    params = {"item": item_id, "validator": validator_id, "now": _time(now)}
    if connection.vendor == "postgresql":
        [(existing, others, counts, gate, live)] = _run(_STATE, project=project_id, **params)
    else:
        [(existing, others, counts, gate)] = _run(_STATE_ELSEWHERE, project=project_id, **params)
        live = any(row[0] for row in _run(_UNLEASE, **params))
    return existing, others, bool(counts), gate or "", bool(live)


def insert_vote(vote: Vote, flags_json: str) -> int:
    """Store `vote` (its item and validator given by id); returns its id."""
    [(pk,)] = _run(
        _INSERT,
        item=vote.item_id,
        validator=vote.validator_id,
        label=vote.label,
        answer=vote.answer,
        flags=flags_json,
        seconds=vote.seconds_spent,
        guideline=vote.guideline_version,
        counts=vote.counts,
        now=_time(vote.created_at),
    )
    return int(pk)


def store_counts(*, item_id: int, counted_votes: int, label_votes_json: str) -> None:
    _run(_COUNT, n=counted_votes, labels=label_votes_json, item=item_id)


# Resolving an item -------------------------------------------------------------------------

# An outcome, written to the item and to its perturbation alike.
_OUTCOME_TYPES = {"status": "text", "label": "text", "answers": "jsonb", "at": "timestamptz"}
_RESOLVE = Statement(
    "item_resolve",
    f"UPDATE {ITEM} SET status = %(status)s, majority_label = %(label)s,"
    " majority_answers = %(answers)s, resolved_at = %(at)s WHERE id = %(item)s",
    **_OUTCOME_TYPES,
    item="bigint",
)
_DROP_LEASES = Statement(
    "item_unlease", f"DELETE FROM {LEASE} WHERE item_id = %(item)s", item="bigint"
)
# One UPDATE, which locks the perturbation's row (after the item's).
_OUTCOME = Statement(
    "perturbation_outcome",
    f"UPDATE {PERTURBATION} SET status = %(status)s, majority_label = %(label)s,"
    " majority_answers = %(answers)s, resolved_at = %(at)s WHERE id = %(perturbation)s",
    **_OUTCOME_TYPES,
    perturbation="bigint",
)


def store_resolution(item: ValidationItem, answers_json: str, outcome: str) -> None:
    """Write a resolved item's outcome, drop its leases, and give its perturbation (if any) the
    status `outcome`."""
    written = {
        "label": item.majority_label,
        "answers": answers_json,
        "at": _time(item.resolved_at),  # type: ignore[arg-type]
    }
    _run(_RESOLVE, status=item.status, item=item.pk, **written)
    _run(_DROP_LEASES, item=item.pk)
    if item.perturbation_id is not None:
        _run(_OUTCOME, status=outcome, perturbation=item.perturbation_id, **written)


# Validator counters ------------------------------------------------------------------------

# Every vote on an item, counting or not.
_VOTERS = Statement(
    "item_voters",
    f"SELECT validator_id, label, answer FROM {VOTE} WHERE item_id = %(item)s",
    item="bigint",
)
# Creates the missing counters of the validators in `rows` (project, validator, changed_at) and
# locks them all: the rows come in validator order, and one statement locks them in that order.
# (The counts themselves are added by UPDATEs: an INSERT checks its row, counts below zero
# included, before it finds the conflict.) WHERE FALSE: the conflicting rows are locked and not
# rewritten, so a resolution leaves one dead version of each voter's row, not two.
_LOCK_COUNTERS = f"""
    INSERT INTO {STATUS}
        (project_id, validator_id, changed_at, qualified, resolved_votes, agreed_votes)
    VALUES {{rows}}
    ON CONFLICT (project_id, validator_id)
        DO UPDATE SET resolved_votes = {STATUS}.resolved_votes WHERE FALSE"""
_ADD = f"""
    UPDATE {STATUS}
    SET resolved_votes = resolved_votes + %s, agreed_votes = agreed_votes + %s
    WHERE project_id = %s AND validator_id IN ({{ids}})
    RETURNING validator_id, qualified, changed_by_id, resolved_votes, agreed_votes"""


def voters_of(item_id: int) -> list[tuple[int, str, str]]:
    """(validator id, label, answer) of every vote on the item."""
    return list(_run(_VOTERS, item=item_id))


def lock_counters(*, project_id: int, validator_ids: list[int], now: datetime) -> None:
    """Create the validators' missing counters and lock them all, in the order given."""
    rows = ", ".join(["(%s, %s, %s, TRUE, 0, 0)"] * len(validator_ids))
    with connection.cursor() as cursor:
        cursor.execute(
            _LOCK_COUNTERS.format(rows=rows),
            [x for v in validator_ids for x in (project_id, v, _time(now))],
        )


def add_to_counters(
    *, project_id: int, validator_ids: list[int], resolved: int, agreed: int
) -> list[tuple[int, bool, int | None, int, int]]:
    """Add to the validators' counters; returns them as they are now (validator id, qualified,
    the admin who set it or None, resolved votes, agreed votes)."""
    with connection.cursor() as cursor:
        cursor.execute(
            _ADD.format(ids=", ".join(["%s"] * len(validator_ids))),
            [resolved, agreed, project_id, *validator_ids],
        )
        return list(cursor.fetchall())


# The queue ---------------------------------------------------------------------------------

# The queue's rules, as SQL fragments over the item `i`, so that choosing an item and checking
# it again under its row lock read the same rule.
_OPEN = f"""
    i.project_id = %(project)s AND i.status = '{ValidationItem.Status.OPEN.value}'
    AND (i.author_id IS NULL OR i.author_id <> %(validator)s)"""
# Open, and not voted on by this validator. Choosing the next item reads it as a count per
# candidate, one probe of the (item, validator) unique index: as NOT EXISTS, PostgreSQL plans an
# anti-join from the validator's votes, which its statistics underestimate for a validator who
# just started (41 ms at 750 votes). Counting the whole pool, the anti-join is the fast way.
_MINE = f"""{_OPEN}
    AND (SELECT count(*) FROM {VOTE} v
         WHERE v.item_id = i.id AND v.validator_id = %(validator)s) = 0"""
_MINE_ALL = f"""{_OPEN}
    AND NOT EXISTS (SELECT 1 FROM {VOTE} v
                    WHERE v.item_id = i.id AND v.validator_id = %(validator)s)"""
# Room beside the live leases of other validators.
_ROOM = f"""
    i.counted_votes + (SELECT count(*) FROM {LEASE} l
                       WHERE l.item_id = i.id AND l.expires_at > %(now)s
                         AND l.validator_id <> %(validator)s)
      < %(votes_per_item)s + i.extra_votes"""
# No item of a pivot of the validator's last RELATED_GAP votes: an original served right after
# its perturbation (or a sibling after a sibling) would tell them what the edit was.
_RECENT = f"""
    WITH recent AS (
        SELECT COALESCE(p.pivot_id, ri.control_id) AS pivot
        FROM {VOTE} rv
        JOIN {ITEM} ri ON ri.id = rv.item_id
        LEFT JOIN {PERTURBATION} p ON p.id = ri.perturbation_id
        WHERE rv.validator_id = %(validator)s AND ri.project_id = %(project)s
        ORDER BY rv.id DESC LIMIT {RELATED_GAP})"""
_UNRELATED = f"""
    NOT EXISTS (SELECT 1 FROM recent r WHERE r.pivot = i.control_id)
    AND NOT EXISTS (SELECT 1 FROM {PERTURBATION} pp JOIN recent r ON r.pivot = pp.pivot_id
                    WHERE pp.id = i.perturbation_id)"""
# Not for a validator the crowd gates stopped, gates on or off: no statement of its own.
_GOING = f"""NOT EXISTS (SELECT 1 FROM {STATUS} s WHERE s.project_id = %(project)s
    AND s.validator_id = %(validator)s AND (s.paused OR s.qualification = 'failed'))"""
_NO_FLUSH = "SET LOCAL synchronous_commit TO OFF; "  # a lease's (queue._lease_one says why)
# Prefers items closest to completion, then the oldest (the item_queue index's order).
_ORDER = "ORDER BY i.counted_votes DESC, i.created_at, i.id"
_TYPES = {"project": "bigint", "validator": "integer", "now": "timestamptz"}
_ROOM_TYPES = {**_TYPES, "votes_per_item": "integer"}
# A live lease of this validator's comes first.
_HELD = Statement(
    "queue_held",
    f"""SELECT i.* FROM {ITEM} i
        JOIN {LEASE} l ON l.item_id = i.id
        WHERE l.validator_id = %(validator)s AND i.project_id = %(project)s
          AND l.expires_at > %(now)s AND i.status = '{ValidationItem.Status.OPEN.value}'
          AND {_GOING}
        ORDER BY l.id LIMIT 1""",
    **_TYPES,
)
_CANDIDATES = f"""{_RECENT}
    SELECT i.* FROM {ITEM} i
    WHERE {_MINE} AND {_ROOM} AND {_UNRELATED} AND {_GOING}"""
# The best candidate that no one else is being served right now.
_CHOOSE = Statement(
    "queue_choose", f"{_CANDIDATES} {_ORDER} LIMIT 1", lock="FOR UPDATE SKIP LOCKED", **_ROOM_TYPES
)
# One fresh statement re-checks the rules and writes the lease (replacing this validator's
# expired one on the item, if any).
_LEASE = Statement(
    "queue_lease",
    f"""INSERT INTO {LEASE} (item_id, validator_id, expires_at)
        SELECT i.id, %(validator)s, %(expires)s FROM {ITEM} i
        WHERE i.id = %(item)s AND {_MINE} AND {_ROOM}
        ON CONFLICT (item_id, validator_id) DO UPDATE SET expires_at = excluded.expires_at
        RETURNING item_id""",
    **_ROOM_TYPES,
    expires="timestamptz",
    item="bigint",
)
# Open items this validator may take, and those of them that others' live leases fill: a short
# list, read by the leases' side, so that no lease count runs for every item of the pool.
_POOL = f"SELECT count(*) FROM {ITEM} i WHERE {_MINE_ALL}"
_FULL = f"""
    SELECT count(*) FROM {ITEM} i
    WHERE i.id IN (SELECT l.item_id FROM {LEASE} l
                   WHERE l.expires_at > %(now)s AND l.validator_id <> %(validator)s)
      AND {_MINE} AND NOT ({_ROOM})"""


# Whether the queue's spacing rule would serve this item to this validator now.
_UNRELATED_NOW = Statement(
    "vote_unrelated",
    f"{_RECENT} SELECT EXISTS (SELECT 1 FROM {ITEM} i WHERE i.id = %(item)s AND {_UNRELATED})",
    project="bigint",
    validator="integer",
    item="bigint",
)


def unrelated_to_recent_votes(*, project_id: int, validator_id: int, item_id: int) -> bool:
    """Whether the item is of no pivot among this validator's last RELATED_GAP votes."""
    [(unrelated,)] = _run(_UNRELATED_NOW, project=project_id, validator=validator_id, item=item_id)
    return bool(unrelated)


def queue_params(*, project_id: int, validator_id: int, votes_per_item: int, now: datetime) -> Any:
    """The parameters every queue statement reads."""
    return {
        "project": project_id,
        "validator": validator_id,
        "now": _time(now),
        "votes_per_item": votes_per_item,
    }


def items_left(params: dict[str, Any]) -> int:
    with connection.cursor() as cursor:
        cursor.execute(_POOL, params)
        mine = cursor.fetchone()[0]
        cursor.execute(_FULL, params)
        return int(mine - cursor.fetchone()[0])


def held_item(params: dict[str, Any]) -> ValidationItem | None:
    """The open item of this validator's oldest live lease, if any."""
    rows = fetch(ValidationItem, *_HELD.bind(params))
    return rows[0] if rows else None


def choose_candidate(params: dict[str, Any], skip: list[int], *, wait: bool) -> Any:
    """The best candidate item, or None. Without `wait`, locked with SKIP LOCKED (None when
    every candidate is locked); with it, unlocked, for `lock_by_id` to wait on."""
    if wait or skip:
        skipped = f"AND i.id NOT IN ({', '.join(map(str, skip))})" if skip else ""
        lock = "" if wait else _CHOOSE.lock_clause()
        statement, values = f"{_CANDIDATES} {skipped} {_ORDER} LIMIT 1{lock}", params
    else:  # the usual case, prepared
        statement, values = _CHOOSE.bind(params)
    if not wait and connection.vendor == "postgresql":
        statement = _NO_FLUSH + statement  # it opens a lease's transaction
    rows = fetch(ValidationItem, statement, values)
    return rows[0] if rows else None


def lock_by_id(item_id: int) -> ValidationItem | None:
    """The item, locked by its key, waiting for whoever holds it; None when the holder
    deleted it (a delete of its perturbation, an import's undo, the project's delete)."""
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    sql = f"SELECT i.* FROM {ITEM} i WHERE i.id = %(item)s"
    rows = fetch(ValidationItem, sql + lock, {"item": item_id})
    return rows[0] if rows else None


def lease(params: dict[str, Any], *, item_id: int, expires: datetime) -> bool:
    """Lease the item to the validator if the rules still allow it; whether they did."""
    return bool(_run(_LEASE, **params, item=item_id, expires=_time(expires)))
