"""The crowd gates' hand-written statements: serving a gold item in place of a real one, and
answering it. Each path runs as many statements as a real item's, of the same kinds, so that
neither the page nor its timing tells a gold item apart (docs/security.md; the test is
tests/annotation/crowd/test_gold_timing.py, the timing `benchmarks/crowd.py`):

- serving, after the queue has locked its best candidate: `gold_serve` where a real item
  writes its lease (`queue_lease`);
- answering, once `vote_lock` found no real item: `gold_lock` (the validator's status, locked),
  `gold_state` (the item and their answer so far) and `gold_write` (the answer and the status),
  where a real vote runs `vote_state` (which drops its lease), `vote_insert` and `vote_count`.
"""

from dataclasses import dataclass
from typing import Any

from django.db import connection

from annotation.models import GoldAnswer, GoldItem, ValidationItem, ValidatorStatus, Vote
from annotation.sql import Statement, fetch

GOLD = GoldItem._meta.db_table
ANSWER = GoldAnswer._meta.db_table
STATUS = ValidatorStatus._meta.db_table
ITEM = ValidationItem._meta.db_table
VOTE = Vote._meta.db_table
_WHO = {"project": "bigint", "validator": "integer"}

# A pool item this validator did not write and has not answered, drawn at random.
_DRAW = f"""
    SELECT g.* FROM {GOLD} g
    WHERE g.project_id = %(project)s AND g.kind = '{GoldItem.Kind.POOL.value}'
      AND (g.author_id IS NULL OR g.author_id <> %(validator)s)
      AND NOT EXISTS (SELECT 1 FROM {ANSWER} a
                      WHERE a.gold_item_id = g.id AND a.validator_id = %(validator)s)
    ORDER BY random() LIMIT 1"""
_MINE = "s.project_id = %(project)s AND s.validator_id = %(validator)s"
# Drawn and marked as served to them (gold_pending) in one statement.
_SERVE = Statement(
    "gold_serve",
    f"""WITH drawn AS ({_DRAW})
        UPDATE {STATUS} AS s SET gold_pending = drawn.id FROM drawn WHERE {_MINE}
        RETURNING drawn.*""",
    **_WHO,
)
_MARK = Statement(
    "gold_mark_served",
    f"UPDATE {STATUS} AS s SET gold_pending = %(gold)s WHERE {_MINE}",
    **_WHO,
    gold="bigint",
)


def serve_gold(*, project_id: int, validator_id: int) -> GoldItem | None:
    """Draw a gold item for the validator and mark it served to them; None when none is left
    (their status row exists: the gates read it before serving)."""
    who = {"project": project_id, "validator": validator_id}
    if connection.vendor == "postgresql":
        found = fetch(GoldItem, *_SERVE.bind(who))
        return found[0] if found else None
    # SQLite (the demo) returns no column of another table from an UPDATE: two statements.
    drawn = fetch(GoldItem, _DRAW, who)
    if drawn:
        with connection.cursor() as cursor:
            cursor.execute(*_MARK.bind({**who, "gold": drawn[0].pk}))
    return drawn[0] if drawn else None


# Answering -------------------------------------------------------------------------------------

# The validator's status, locked (their gold answers are written under it), if the item is a
# gold item of the project; no row when it is not, or nothing was ever served to them.
_LOCK = Statement(
    "gold_lock",
    f"""SELECT s.* FROM {STATUS} s WHERE {_MINE}
        AND EXISTS (SELECT 1 FROM {GOLD} g WHERE g.id = %(item)s AND g.project_id = %(project)s)""",
    lock="FOR UPDATE",
    **_WHO,
    item="bigint",
)
# The item, with this validator's latest answer on it: read once the lock is held, in a fresh
# statement, so that it sees an answer committed meanwhile.
_STATE = Statement(
    "gold_state",
    f"""SELECT g.*, a.id AS previous_id, a.attempt AS previous_attempt
        FROM {GOLD} g
        LEFT JOIN (SELECT * FROM {ANSWER} WHERE gold_item_id = %(item)s
                   AND validator_id = %(validator)s ORDER BY id DESC LIMIT 1) a ON TRUE
        WHERE g.id = %(item)s""",
    item="bigint",
    validator="integer",
)
_INSERT_SQL = f"""INSERT INTO {ANSWER} (gold_item_id, project_id, validator_id, phase, attempt,
                             label, answer, flags, seconds_spent, correct, created_at)
    VALUES (%(item)s, %(project)s, %(validator)s, %(phase)s, %(attempt)s, %(label)s,
            %(answer)s, %(flags)s, %(seconds)s, %(correct)s, %(now)s)"""
_INSERT_TYPES = {
    "item": "bigint",
    "phase": "text",
    "attempt": "smallint",
    "label": "text",
    "answer": "text",
    "flags": "jsonb",
    "seconds": "integer",
    "correct": "boolean",
    "now": "timestamptz",
}
# The status as the answer leaves it: the gold counts, the item served, the pause, and after a
# right gold check the mark moved to their latest vote (their votes after it stop counting if
# they are paused later).
_COUNT_SQL = f"""UPDATE {STATUS} AS s SET gold_seen = %(seen)s, gold_correct = %(right_n)s,
        gold_pending = %(pending)s, paused = %(paused)s, paused_at = %(paused_at)s,
        gold_mark = CASE WHEN %(right)s THEN COALESCE(
            (SELECT max(v.id) FROM {VOTE} v JOIN {ITEM} i ON i.id = v.item_id
             WHERE v.validator_id = %(validator)s AND i.project_id = %(project)s), 0)
            ELSE gold_mark END
    WHERE {_MINE}
    RETURNING gold_mark"""
_COUNT_TYPES = {
    "seen": "integer",
    "right_n": "integer",
    "pending": "bigint",
    "paused": "boolean",
    "paused_at": "timestamptz",
    "right": "boolean",
}
# Both in one round trip, as a real vote's insert and counts (SQLite: one after the other).
_WRITE = Statement(
    "gold_write",
    f"WITH answer AS ({_INSERT_SQL}) {_COUNT_SQL}",
    **_WHO,
    **_INSERT_TYPES,
    **_COUNT_TYPES,
)
_INSERT = Statement("gold_insert", _INSERT_SQL, **_WHO, **_INSERT_TYPES)
_COUNT = Statement("gold_count", _COUNT_SQL, **_WHO, **_COUNT_TYPES)


def _run(statement: Statement, params: dict[str, Any]) -> list[Any]:
    with connection.cursor() as cursor:
        cursor.execute(*statement.bind(params))
        return cursor.fetchall() if cursor.description else []


def lock_status(*, project_id: int, validator_id: int, item_id: int) -> ValidatorStatus | None:
    params = {"project": project_id, "validator": validator_id, "item": item_id}
    found = fetch(ValidatorStatus, *_LOCK.bind(params))
    return found[0] if found else None


@dataclass(frozen=True)
class GoldState:
    """A gold item, and the id and attempt of the validator's latest answer on it (None for
    none)."""

    item: GoldItem
    previous_id: int | None
    previous_attempt: int | None


def gold_state(*, item_id: int, validator_id: int) -> GoldState:
    [item] = fetch(GoldItem, *_STATE.bind({"item": item_id, "validator": validator_id}))
    read = vars(item)  # the statement's two extra columns, which `fetch` set on the item
    return GoldState(item, read["previous_id"], read["previous_attempt"])


def write_answer(
    answer: GoldAnswer, flags_json: str, status: ValidatorStatus, *, mark: bool
) -> None:
    """Store the answer, and the validator's status as it stands now (with `mark`, the mark
    moved to their latest vote; `status.gold_mark` is read back)."""
    params = {
        "project": answer.project_id,
        "validator": answer.validator_id,
        "item": answer.gold_item_id,
        "phase": answer.phase,
        "attempt": answer.attempt,
        "label": answer.label,
        "answer": answer.answer,
        "flags": flags_json,
        "seconds": answer.seconds_spent,
        "correct": answer.correct,
        "now": connection.ops.adapt_datetimefield_value(answer.created_at),
        "seen": status.gold_seen,
        "right_n": status.gold_correct,
        "pending": status.gold_pending,
        "paused": status.paused,
        "paused_at": connection.ops.adapt_datetimefield_value(status.paused_at),
        "right": mark,
    }
    if connection.vendor == "postgresql":
        [(status.gold_mark,)] = _run(_WRITE, params)
    else:
        _run(_INSERT, params)
        [(status.gold_mark,)] = _run(_COUNT, params)
