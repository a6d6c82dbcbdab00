"""Prepared statements (annotation.sql): each connection prepares a statement once, a new
connection prepares it again, and a rolled-back transaction does not lose it. Their rows read
into model instances as the ORM reads them."""

import pytest
from django.db import connection, transaction
from django.utils import timezone

from annotation.models import ValidationItem
from annotation.sql import Statement, fetch

SUM = Statement(
    "test_sum", "SELECT %(a)s + %(b)s, %(label)s", a="integer", b="integer", label="text"
)


def run(statement: Statement, **params: object) -> tuple:
    with connection.cursor() as cursor:
        cursor.execute(*statement.bind(params))
        return cursor.fetchone()


def prepared_here() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_prepared_statements")
        return {name for (name,) in cursor.fetchall()}


def test_every_parameter_needs_a_type_and_no_literal_percent():
    with pytest.raises(ValueError, match="a type for each parameter"):
        Statement("untyped", "SELECT %(a)s + %(b)s", a="integer")
    with pytest.raises(ValueError, match="a type for each parameter"):
        Statement("extra", "SELECT %(a)s", a="integer", b="integer")
    with pytest.raises(ValueError, match="literal %"):
        Statement("percent", "SELECT 'x' LIKE '%%' || %(a)s", a="text")


@pytest.mark.django_db(transaction=True)
def test_a_statement_is_prepared_once_per_connection_and_again_on_a_new_one():
    assert run(SUM, a=2, b=3, label="it's") == (5, "it's")  # quoted as a parameter
    assert "test_sum" in prepared_here()
    sql, params = SUM.bind({"a": 1, "b": 1, "label": ""})
    assert sql.startswith("EXECUTE test_sum") and params == [1, 1, ""]
    assert run(SUM, a=40, b=2, label="again") == (42, "again")
    connection.close()  # e.g. CONN_MAX_AGE ran out: the next request opens a new connection
    assert "test_sum" not in prepared_here()
    assert run(SUM, a=1, b=2, label="new") == (3, "new")
    assert "test_sum" in prepared_here()


@pytest.mark.django_db(transaction=True)
def test_a_statement_prepared_in_a_rolled_back_transaction_still_runs():
    with pytest.raises(RuntimeError), transaction.atomic():
        assert run(SUM, a=1, b=1, label="") == (2, "")
        raise RuntimeError("the vote failed")
    assert run(SUM, a=2, b=2, label="") == (4, "")


@pytest.mark.django_db(transaction=True)
def test_behind_a_transaction_pooler_statements_run_as_written(settings):
    """PgBouncer in transaction mode runs one client connection on many server connections,
    which do not share prepared statements: an EXECUTE could name one that is not there."""
    settings.DATABASE_PREPARED_STATEMENTS = False
    connection.close()
    sql, params = SUM.bind({"a": 1, "b": 2, "label": "x"})
    assert not sql.startswith("EXECUTE") and params == {"a": 1, "b": 2, "label": "x"}
    assert run(SUM, a=1, b=2, label="x") == (3, "x")
    assert "test_sum" not in prepared_here()


@pytest.mark.django_db
def test_fetch_reads_rows_as_the_orm_does(project):
    item = ValidationItem.objects.create(
        project=project,
        external_id="ext-1",
        fields={"text": 'naïve "quoted" text'},
        label_votes={"negative": 2},
        counted_votes=2,
        resolved_at=timezone.now(),
    )
    sql = "SELECT i.*, 7 AS extra FROM annotation_validationitem i WHERE i.id = %s"
    [row] = fetch(ValidationItem, sql, [item.pk])
    orm = ValidationItem.objects.get(pk=item.pk)
    for field in ValidationItem._meta.concrete_fields:
        assert getattr(row, field.attname) == getattr(orm, field.attname), field.name
    assert row.fields["text"] == 'naïve "quoted" text' and row.label_votes == {"negative": 2}
    assert row.extra == 7 and not row._state.adding  # a saved row: save() updates it
    row.counted_votes = 3
    row.save(update_fields=["counted_votes"])
    assert ValidationItem.objects.get(pk=item.pk).counted_votes == 3
    assert fetch(ValidationItem, sql, [-1]) == []
    with pytest.raises(ValueError, match="lacks"):
        fetch(ValidationItem, "SELECT id FROM annotation_validationitem", [])
