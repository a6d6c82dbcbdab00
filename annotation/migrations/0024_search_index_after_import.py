"""The Data page's text search indexed after an import, not inside it (docs/data.md): each
original and perturbation says whether it is in the trigram index yet (`searchable`), and the
indexes of 0023 become partial, WHERE searchable. An import writes its rows unsearchable, which
costs it no trigram extraction (the indexes cut originals from 13-14k rows/s to 2.7k); a worker
then sets them searchable, a few thousand at a time (annotation.data.services.search_index).
The partial btree indexes find the rows still unsearchable, which the search reads without
the trigrams. PostgreSQL keeps no statistics of a partial index's expression, and without them
it read every row that holds a common text (21.6 s at 1M rows, against 77-85 ms): statistics
of the expression (CREATE STATISTICS) give them back. They name `answers` too, a JSON column
that an import's ANALYZE leaves out (annotation.bulk.analyze), so that it skips them, with a
warning, where computing them took 2.5 s against 0.8 s at 460k reviews: autovacuum's ANALYZE,
of every column, keeps them. SQLite (the demo) has no trigram index: it scans, as before."""

from django.db import migrations, models

TABLES = ("annotation_example", "annotation_perturbation")


def partial(apps, schema_editor):  # type: ignore[no-untyped-def]
    _trigrams(schema_editor, "WHERE searchable")


def whole(apps, schema_editor):  # type: ignore[no-untyped-def]
    _trigrams(schema_editor, "")


def _trigrams(schema_editor, where: str):  # type: ignore[no-untyped-def]
    """0023's indexes made again, of the rows `where` says; their names are kept."""
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in TABLES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {table}_fields_trgm")
        schema_editor.execute(
            f"CREATE INDEX {table}_fields_trgm ON {table} "
            f"USING gin (UPPER(fields::text) gin_trgm_ops) {where}"
        )
        schema_editor.execute(f"DROP STATISTICS IF EXISTS {table}_fields_text")
        if where:
            schema_editor.execute(
                f"CREATE STATISTICS {table}_fields_text (ndistinct) "
                f"ON (UPPER(fields::text)), answers FROM {table}"
            )
            schema_editor.execute(f"ANALYZE {table}")


class Migration(migrations.Migration):
    dependencies = [("annotation", "0023_text_search_trigrams")]

    operations = [
        migrations.AddField(
            model_name="example",
            name="searchable",
            field=models.BooleanField(default=True, db_default=True),
        ),
        migrations.AddField(
            model_name="perturbation",
            name="searchable",
            field=models.BooleanField(default=True, db_default=True),
        ),
        migrations.AddIndex(
            model_name="example",
            index=models.Index(
                condition=models.Q(searchable=False),
                fields=["project", "id"],
                name="example_unsearchable",
            ),
        ),
        migrations.AddIndex(
            model_name="perturbation",
            index=models.Index(
                condition=models.Q(searchable=False),
                fields=["project", "id"],
                name="perturbation_unsearchable",
            ),
        ),
        migrations.RunPython(partial, whole),
    ]
