"""Text search on the Data page (docs/data.md): on PostgreSQL, trigram indexes (pg_trgm) over
each original's and each perturbation's fields as upper-case text, which the search's
prefilter reads (annotation.data.selectors._search). SQLite (the demo) scans, as before."""

from django.db import migrations

TABLES = ("annotation_example", "annotation_perturbation")


def create(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for table in TABLES:
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {table}_fields_trgm ON {table} "
            "USING gin (UPPER(fields::text) gin_trgm_ops)"
        )


def drop(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in TABLES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {table}_fields_trgm")


class Migration(migrations.Migration):
    dependencies = [("annotation", "0022_crowd_validation")]

    operations = [migrations.RunPython(create, drop)]
