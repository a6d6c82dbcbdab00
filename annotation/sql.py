"""Hand-written statements: the tools (`Statement`, `fetch`, `count_within`) and the two
statements that run on every request (a project with the user's roles in it, and the user of an
API token). The validation hot path's statements are in annotation.validation.sql; bulk work is
in annotation.bulk. Table names come from the models' `_meta`.

A `Statement` is prepared once per PostgreSQL connection (PREPARE, then EXECUTE): the hot
path runs the same few statements on every vote, and PostgreSQL spent more time planning them
than running them (the queue's choosing query took 1.8 ms to plan and 0.9 ms to run).
Elsewhere (SQLite, the demo), and behind a pooler in transaction mode
(DATABASE_PREPARED_STATEMENTS=0), a statement runs as written.

`fetch` reads a statement's rows into model instances, as `Model.objects.raw()` does, but maps
the columns and chooses their converters once per statement shape instead of on every call.
"""

import functools
import re
import weakref
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import OperationalError, connection, transaction
from django.db.models import Model, QuerySet

M = TypeVar("M", bound=Model)

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
        if connection.vendor != "postgresql" or not settings.DATABASE_PREPARED_STATEMENTS:
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


def fetch(model: type[M], sql: str, params: Any) -> list[M]:
    """The rows of a `SELECT t.*, ...` over `model`'s table as its instances, each other column
    set as an attribute: what `model.objects.raw(sql, params)` gives."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        build = _builder(
            model, tuple(column[0] for column in cursor.description), connection.vendor
        )
        return [build(row) for row in cursor.fetchall()]


def count_within(qs: QuerySet[Any], milliseconds: int) -> int | None:
    """`qs.count()`, or None when PostgreSQL takes longer than `milliseconds` to count: its
    statement_timeout, set for this count alone (elsewhere, the count takes what it takes)."""
    try:
        with transaction.atomic():
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute(f"SET LOCAL statement_timeout = {int(milliseconds)}")
            return qs.count()
    except OperationalError:  # the count ran out of time
        return None


@functools.cache
def _builder(model: type[M], columns: tuple[str, ...], vendor: str) -> Callable[[Sequence], M]:
    """Builds `model` instances from rows of `columns`; cached per database vendor too, whose
    converters differ."""
    fields = model._meta.concrete_fields
    missing = [str(field.column) for field in fields if field.column not in columns]
    if missing:
        raise ValueError(f"{model.__name__}: the statement lacks {', '.join(missing)}")
    position = [columns.index(field.column) for field in fields]
    names = [field.attname for field in fields]
    # The database's and the field's converters, as the ORM applies them (JSON text on
    # PostgreSQL; datetimes and booleans on SQLite).
    converters = []
    for n, field in enumerate(fields):
        column = field.get_col(model._meta.db_table)
        found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
        converters += [(n, convert, column) for convert in found]
    known = {field.column for field in fields}
    extras = [(n, name) for n, name in enumerate(columns) if name not in known]

    def build(row: Sequence) -> M:
        values = [row[n] for n in position]
        for n, convert, column in converters:
            values[n] = convert(values[n], column, connection)
        instance = model.from_db(connection.alias, names, values)
        for n, name in extras:
            setattr(instance, name, row[n])
        return instance

    return build


# The statements below run on every request; they are built once the models are loaded (this
# module is imported while DRF reads its settings, before annotation.models may be).
@functools.cache
def _project() -> Statement:
    projects = apps.get_model("annotation", "Project")._meta.db_table
    members = apps.get_model("annotation", "Membership")._meta.db_table
    return Statement(
        "project_for",
        f"SELECT p.*, m.role AS held_role FROM {projects} p"
        f" LEFT JOIN {members} m ON m.project_id = p.id AND m.user_id = %(user)s"
        " WHERE p.slug = %(slug)s",
        user="integer",
        slug="text",
    )


def project_with_roles(slug: str, user_id: int | None) -> tuple[Any, set[str]]:
    """The project `slug` (None if there is none) and the roles the user holds in it."""
    rows = fetch(
        apps.get_model("annotation", "Project"), *_project().bind({"user": user_id, "slug": slug})
    )
    if not rows:
        return None, set()
    return rows[0], {row.held_role for row in rows if row.held_role}  # type: ignore[attr-defined]


@functools.cache
def _token_user() -> Statement:
    users = get_user_model()._meta.db_table
    tokens = apps.get_model("authtoken", "Token")._meta.db_table
    sql = f"SELECT u.* FROM {users} u JOIN {tokens} t ON t.user_id = u.id"
    return Statement("token_user", sql + " WHERE t.key = %(key)s", key="text")


def token_user(key: str) -> Any:
    """The user whose API token is `key`, or None."""
    users = fetch(get_user_model(), *_token_user().bind({"key": key}))
    return users[0] if users else None
