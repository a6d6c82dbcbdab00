"""Prepared statements (annotation.prepared): each connection prepares a statement once, a new
connection prepares it again, and a rolled-back transaction does not lose it."""

import pytest
from django.db import connection, transaction

from annotation.prepared import Statement

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
