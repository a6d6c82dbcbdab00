"""Many plain rows, fast. Inserts (imports, release entries): PostgreSQL's COPY, or Django's
bulk_create elsewhere (SQLite, the demo); rows are dicts of attribute name to value, and columns
not given take the field's default, as Model() would. Reads: the rows of a values_list query as
the driver returns them, without the ORM's per-value converters."""

import datetime
import functools
import gc
import io
import itertools
import json
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import orjson
from django.db import IntegrityError, OperationalError, connection, models, transaction
from django.db.models.expressions import RawSQL

from annotation.errors import DomainError

BATCH = 5000
CHUNK = 1000  # rows read at a time where a query reads many in pieces


def analyze(*tables: type[models.Model]) -> None:
    """Refresh the planner's statistics of the tables an import filled, before it reports
    success. A server that has not autovacuumed yet (or never does) otherwise plans the
    validation queue blind: after a bulk import, 8 votes/s instead of 259 (docs/performance.md).
    JSON columns are left out: queries reach them through expressions, which their statistics
    do not inform, and their texts took half of the time (0.5 s against 0.2 s at 48k examples)."""
    if connection.vendor != "postgresql":
        return
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for model in tables:
            fields = model._meta.concrete_fields
            columns = [quote(str(f.column)) for f in fields if not isinstance(f, models.JSONField)]
            cursor.execute(f"ANALYZE {quote(model._meta.db_table)} ({', '.join(columns)})")


@contextmanager
def jit_off() -> Iterator[None]:
    """A transaction in which PostgreSQL compiles no query. It compiles any query whose
    estimated cost passes jit_above_cost, which a scan of a large table does: the statistics'
    grouped read of a 100k-item project, in a table of 1.1M items, spent 53 ms of its 150 ms
    compiling."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL jit = off")
        yield


def related_names_json(model: type[models.Model], field_name: str) -> RawSQL:
    """The `name`s of a row's many-to-many `field_name` as a JSON array (text), for a query
    over `model`: one subquery, where a prefetch would read every related row into objects."""
    field: Any = model._meta.get_field(field_name)
    through = field.remote_field.through._meta.db_table
    target = field.related_model._meta.db_table
    aggregate = "JSON_AGG" if connection.vendor == "postgresql" else "JSON_GROUP_ARRAY"
    return RawSQL(
        f"SELECT CAST(COALESCE({aggregate}(t.name), '[]') AS TEXT) FROM {through} r"
        f" JOIN {target} t ON t.id = r.{field.m2m_reverse_name()}"
        f" WHERE r.{field.m2m_column_name()} = {model._meta.db_table}.id",
        [],
    )


def plain_rows(query: Any, json_columns: Iterable[int] = ()) -> list[Any]:
    """The rows of a values_list `query` of plain columns and counts, as tuples; as lists when
    `json_columns` name columns to decode with orjson. The ORM's converters cost more than the
    query itself for 100k rows."""
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return _decoded(cursor.fetchall(), json_columns)


def streamed_rows(
    query: Any, json_columns: Iterable[int] = (), chunk: int = 10_000
) -> Iterator[Any]:
    """The rows of a values_list `query`, as plain_rows reads them, streamed: a server-side
    cursor on PostgreSQL, so that memory stays flat whatever the number of rows."""
    json_columns = list(json_columns)
    sql, params = query.query.sql_with_params()
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(chunk):
            yield from _decoded(rows, json_columns)


class Beside:
    """Database work on a thread beside this one: on PostgreSQL, the thread uses this thread's
    connection (the driver's, so the same transaction) for one task at a time, in the order
    given, while this thread goes on. This thread leaves the connection alone until it has the
    results it waits for: psycopg2 serialises two threads' queries, but not a COPY's exchanges
    with the server. Leaving waits for the tasks still queued. Elsewhere (SQLite, the demo)
    each task runs at once, in this thread."""

    def __enter__(self) -> "Beside":
        connection.ensure_connection()
        self.driver = connection.connection
        self.pool = ThreadPoolExecutor(1) if connection.vendor == "postgresql" else None
        self.copies: dict[type[models.Model], _Copy] = {}
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)

    def submit(self, task: Callable[..., Any], *args: Any) -> Future[Any]:
        """`task(driver, *args)` on the thread (PostgreSQL only)."""
        assert self.pool is not None, "a task on the driver's connection needs PostgreSQL"
        return self.pool.submit(task, self.driver, *args)

    def read(self, query: Any, json_columns: Iterable[int] = ()) -> Future[list[Any]]:
        """The rows of a values_list `query`, as plain_rows reads them."""
        json_columns = list(json_columns)
        if self.pool is None:
            return _done(plain_rows(query, json_columns))
        # Compiled here: Django's connection belongs to this thread.
        return self.submit(_read, *query.query.sql_with_params(), json_columns)

    def store(self, model: type[models.Model], rows: list[dict[str, Any]]) -> Future[None]:
        """Insert `rows` (as insert_rows takes them, without keys), encoded here."""
        if self.pool is None:
            model._default_manager.bulk_create([model(**row) for row in rows])
            return _done(None)
        if model not in self.copies:
            self.copies[model] = _Copy(model, rows[0], with_keys=False)
        copy = self.copies[model]
        return self.submit(copy.send, copy.encode(rows, None))

    def result(self, pending: Future[Any]) -> Any:
        with connection.wrap_database_errors:  # the driver's errors as Django's, as elsewhere
            return pending.result()


def _done(result: Any) -> Future[Any]:
    done: Future[Any] = Future()
    done.set_result(result)
    return done


def _read(driver: Any, sql: str, params: Any, json_columns: list[int]) -> list[Any]:
    with driver.cursor() as cursor:
        cursor.execute(sql, params)
        return _decoded(cursor.fetchall(), json_columns)


def _decoded(rows: list[Any], json_columns: Iterable[int]) -> list[Any]:
    json_columns = list(json_columns)
    if not json_columns:
        return rows
    decoded = [list(row) for row in rows]
    for row in decoded:
        for i in json_columns:
            row[i] = orjson.loads(row[i])
    return decoded


def present_values(
    model: type[models.Model], column: str, values: list[Any], **equal: Any
) -> set[Any]:
    """The `values` that `column` holds in `model`'s rows whose other columns are `equal` to
    what is given (project_id=...): one query on PostgreSQL, `= ANY` of one array, where the
    ORM's IN lists of 5,000 spent 0.1-0.3 s preparing a 20k-row import's ids one by one."""
    if connection.vendor != "postgresql":
        found: set[Any] = set()
        for start in range(0, len(values), BATCH):
            rows = model._default_manager.filter(
                **equal, **{f"{column}__in": values[start : start + BATCH]}
            )
            found.update(rows.values_list(column, flat=True))
        return found
    quote = connection.ops.quote_name
    where = "".join(f" AND {quote(name)} = %s" for name in equal)
    sql = (
        f"SELECT {quote(column)} FROM {quote(model._meta.db_table)}"
        f" WHERE {quote(column)} = ANY(%s){where}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [list(values), *equal.values()])
        return {row[0] for row in cursor.fetchall()}


def reserve_ids(model: type[models.Model], n: int) -> list[int]:
    """n primary keys for rows about to be inserted (PostgreSQL only)."""
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [table, n],
        )
        return [row[0] for row in cursor.fetchall()]


def insert_rows(
    model: type[models.Model], rows: Iterable[dict[str, Any]], *, returning_ids: bool = True
) -> list[int]:
    """Insert `rows`, read BATCH at a time (a generator keeps memory flat); returns their
    primary keys, in order (none unless `returning_ids`: reserving them costs a sequence call
    per row)."""
    ids: list[int] = []
    if connection.vendor != "postgresql":
        for batch in _batches(rows):
            created = model._default_manager.bulk_create([model(**row) for row in batch])
            ids += [obj.pk for obj in created]
        return ids if returning_ids else []
    batches = _batches(rows)

    def keyed(batch: list[dict[str, Any]] | None) -> tuple[Any, list[int] | None]:
        return batch, reserve_ids(model, len(batch)) if batch and returning_ids else None

    batch, keys = keyed(next(batches, None))
    copy = _Copy(model, batch[0], returning_ids) if batch else None
    sending = None
    with Beside() as beside:  # the database stores a batch while the next one is encoded
        while batch and copy:
            text = copy.encode(batch, keys)
            ids += keys or []
            if sending is not None:  # its error first, and the connection free for the keys
                beside.result(sending)
            following = keyed(next(batches, None))
            sending = beside.submit(copy.send, text)
            batch, keys = following
        if sending is not None:
            beside.result(sending)
    return ids


@contextmanager
def immediate_constraints() -> Iterator[None]:
    """Inside, the transaction's deferrable constraints (Django's foreign keys) are checked at
    each statement instead of at commit; deferred again after (PostgreSQL; elsewhere nothing
    changes)."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    yield
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


@contextmanager
def atomic_or_conflict(said: str) -> Iterator[None]:
    """transaction.atomic, for a write that a concurrent request can make impossible (a delete
    while a release is published, say): PostgreSQL refuses it on a foreign key, at a statement
    or at the commit, or aborts it to break a deadlock with that request. The deferred keys
    are checked as the block ends, so that the refusal comes here even inside an outer
    transaction, and becomes a DomainError (409) that says `said` (what happened, and what to
    do), after the rollback."""
    with deadlock_as_conflict(said):
        try:
            with transaction.atomic():
                yield
                with immediate_constraints():
                    pass
        except IntegrityError:
            raise DomainError(said, code="conflict") from None


DEADLOCK_DETECTED = "40P01"  # PostgreSQL's SQLSTATE


@contextmanager
def deadlock_as_conflict(said: str) -> Iterator[None]:
    """Around a transaction (outside its atomic block, so that it is rolled back first): when
    PostgreSQL aborts it to break a cycle of row locks with another request (a vote and a
    project's delete, each waiting for a row the other holds), a DomainError (409) that says
    `said`; the other request goes through."""
    try:
        yield
    except OperationalError as error:
        if getattr(error.__cause__, "pgcode", None) != DEADLOCK_DETECTED:
            raise
        raise DomainError(said, code="conflict") from None


@contextmanager
def collector_paused() -> Iterator[None]:
    """Inside, Python's cyclic garbage collector does not run; memory without cycles is still
    freed at once. Bulk work makes objects by the million that live until it ends, and the
    collector's passes over them all cost 8% of a 100k-set release for nothing: they hold no
    cycles."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _batches(rows: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    remaining = iter(rows)
    while batch := list(itertools.islice(remaining, BATCH)):
        yield batch


class _Copy:
    """COPY of rows with the keys of `first` into `model`'s table: those columns from each row,
    the others with their default, and the primary key when the caller reserved them."""

    def __init__(self, model: type[models.Model], first: dict[str, Any], with_keys: bool):
        pk = model._meta.pk
        named = [f for f in model._meta.concrete_fields if f.attname in first and f is not pk]
        rest = [f for f in model._meta.concrete_fields if f not in named and f is not pk]
        # Columns the rows leave out hold the same default in every row: encode it once.
        self.constant = "".join("\t" + _copy_text(_json(f, f.get_default())) for f in rest)
        self.encoders = [(f.attname, _encoder(f)) for f in named]
        fields = [pk, *named, *rest] if with_keys else [*named, *rest]
        columns = ", ".join(connection.ops.quote_name(str(f.column)) for f in fields)
        table = connection.ops.quote_name(model._meta.db_table)
        self.sql = f"COPY {table} ({columns}) FROM STDIN"

    def encode(self, batch: list[dict[str, Any]], keys: list[int] | None) -> io.StringIO:
        buffer = io.StringIO()
        for n, row in enumerate(batch):
            values = [str(keys[n])] if keys else []
            values += [encode(row[name]) for name, encode in self.encoders]
            buffer.write("\t".join(values) + self.constant + "\n")
        buffer.seek(0)
        return buffer

    def send(self, driver: Any, text: io.StringIO) -> None:
        with driver.cursor() as cursor:
            cursor.copy_expert(self.sql, text)


def _json(field: Any, value: Any) -> Any:
    return _json_text(value) if isinstance(field, models.JSONField) else value


def _json_text(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except orjson.JSONEncodeError:  # an integer past 64 bits, which jsonb keeps
        return json.dumps(value)


def _encoder(field: models.Field) -> Callable[[Any], str]:
    """How a column's values are written in COPY's text format."""
    if isinstance(field, models.JSONField):
        return lambda value: _copy_text(_json_text(value))
    return _copy_text


# A backslash doubled first; each character is looked for before it is replaced: four scans
# in C, where str.translate with a table took 100 times as long over a review's text.
_ESCAPES = (("\\", "\\\\"), ("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r"))


def _escaped(value: str) -> str:
    for char, escape in _ESCAPES:
        if char in value:
            value = value.replace(char, escape)
    return value


@functools.lru_cache(maxsize=64)
def _timestamp(value: datetime.datetime) -> str:
    """A timestamp's text, once for the many rows of an import that share it."""
    return value.isoformat()


def _copy_text(value: Any) -> str:
    """One value in COPY's text format."""
    if type(value) is str:  # the common case first
        return _escaped(value)
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime.datetime):
        return _timestamp(value)
    return _escaped(str(value))
