"""Hand-written statements prepared once per PostgreSQL connection (PREPARE, then EXECUTE).

The validation hot path runs the same few statements on every vote, and PostgreSQL spent more
time planning them than running them: the queue's choosing query took 1.8 ms to plan and 0.9 ms
to run. Prepared, a connection plans each statement a few times and then reuses a generic plan.
Elsewhere (SQLite, the demo) a statement runs as written.
"""

import re
import weakref
from typing import Any

from django.db import connection

_PARAM = re.compile(r"%\((\w+)\)s")
# Statements prepared on each live driver connection: a new connection prepares them again.
_prepared: "weakref.WeakKeyDictionary[Any, set[str]]" = weakref.WeakKeyDictionary()


class Statement:
    """SQL with named parameters (`%(name)s`), each given its PostgreSQL type, e.g.
    `Statement("lease", "DELETE ... WHERE item_id = %(item)s", item="bigint")`. A `lock`
    clause (FOR UPDATE ...) is added where the database has row locks: not on SQLite."""

    def __init__(self, name: str, sql: str, lock: str = "", **types: str):
        self.name = name
        self.sql = sql
        self.lock = f" {lock}" if lock else ""
        self.params = list(dict.fromkeys(_PARAM.findall(sql)))
        if set(self.params) != set(types):
            raise ValueError(f"{name}: give a type for each parameter, and none other")
        position = {param: f"${n}" for n, param in enumerate(self.params, start=1)}
        body = _PARAM.sub(lambda match: position[match.group(1)], sql)
        if "%" in body:
            raise ValueError(f"{name}: a prepared statement has no literal %")
        declared = ", ".join(types[param] for param in self.params)
        self.prepare_sql = f"PREPARE {name} ({declared}) AS {body}{self.lock}"
        self.execute_sql = f"EXECUTE {name} ({', '.join(['%s'] * len(self.params))})"

    def bind(self, params: dict[str, Any]) -> tuple[str, Any]:
        """(sql, params) that run the statement on this thread's connection: on PostgreSQL an
        EXECUTE, once the connection has prepared it; elsewhere the statement itself."""
        if connection.vendor != "postgresql":
            return self.sql + self.lock_clause(), params
        connection.ensure_connection()
        done = _prepared.setdefault(connection.connection, set())
        if self.name not in done:
            with connection.cursor() as cursor:
                cursor.execute(self.prepare_sql)
            done.add(self.name)
        return self.execute_sql, [params[param] for param in self.params]

    def lock_clause(self) -> str:
        """The statement's locking clause, where this database has row locks."""
        return self.lock if connection.features.has_select_for_update else ""
