"""Fast inserts of many plain rows (imports, release entries): PostgreSQL's COPY, or Django's
bulk_create elsewhere (SQLite, the demo). Rows are dicts of attribute name to value; columns
not given take the field's default, as Model() would."""

import datetime
import io
import json
from typing import Any

from django.db import connection, models

BATCH = 5000


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
    model: type[models.Model], rows: list[dict[str, Any]], *, returning_ids: bool = True
) -> list[int]:
    """Insert `rows`; returns their primary keys, in order (none unless `returning_ids`:
    reserving them costs a sequence call per row)."""
    if not rows:
        return []
    if connection.vendor != "postgresql":
        objects = (model(**row) for row in rows)
        created = model._default_manager.bulk_create(objects, batch_size=BATCH)
        return [obj.pk for obj in created] if returning_ids else []
    ids = reserve_ids(model, len(rows)) if returning_ids else []
    pk = model._meta.pk
    keys = [pk] if returning_ids else []
    named = [f for f in model._meta.concrete_fields if f.attname in rows[0] and f is not pk]
    rest = [f for f in model._meta.concrete_fields if f not in named and f is not pk]
    # Columns the rows leave out hold the same default in every row: encode it once.
    constant = "".join("\t" + _copy_text(_json(f, f.get_default())) for f in rest)
    names = [(f.attname, isinstance(f, models.JSONField)) for f in named]
    columns = ", ".join(connection.ops.quote_name(str(f.column)) for f in [*keys, *named, *rest])
    sql = f"COPY {connection.ops.quote_name(model._meta.db_table)} ({columns}) FROM STDIN"
    for start in range(0, len(rows), BATCH):
        buffer = io.StringIO()
        for n, row in enumerate(rows[start : start + BATCH], start=start):
            values = [str(ids[n])] if returning_ids else []
            for name, is_json in names:
                value = row[name]
                values.append(_copy_text(json.dumps(value) if is_json else value))
            buffer.write("\t".join(values) + constant + "\n")
        buffer.seek(0)
        with connection.cursor() as cursor:
            cursor.copy_expert(sql, buffer)
    return ids


def _json(field: Any, value: Any) -> Any:
    return json.dumps(value) if isinstance(field, models.JSONField) else value


_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_text(value: Any) -> str:
    """One value in COPY's text format."""
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    return str(value).translate(_ESCAPES)
