"""Bulk inserts (COPY on PostgreSQL) across batch boundaries: every row stored, each key the
row's own, in order, from a generator as from a list. Work beside the caller: each query's own
rows, in the caller's transaction and in the order given, and the first error raised to the
caller."""

import gc

import pytest
from django.db import DataError, IntegrityError, transaction
from django.db.models import IntegerField
from django.db.models.functions import Cast

from annotation.bulk import (
    BATCH,
    Beside,
    collector_paused,
    insert_rows,
    plain_rows,
    present_values,
)
from annotation.models import Example
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("as_generator", [False, True])
def test_rows_across_batches_keep_their_keys_and_values(as_generator):
    project = ProjectFactory()
    n = 2 * BATCH + 7
    rows = [
        {"project_id": project.pk, "external_id": f"e{i}", "label": "positive",
         "fields": {"text": f"tab\\there {i}\nand a line"}}
        for i in range(n)
    ]  # fmt: skip
    ids = insert_rows(Example, (row for row in rows) if as_generator else rows)
    assert len(ids) == n and len(set(ids)) == n
    stored = dict(Example.objects.filter(project=project).values_list("pk", "external_id"))
    assert [stored[pk] for pk in ids] == [row["external_id"] for row in rows]
    last = Example.objects.get(pk=ids[-1])
    assert last.fields == rows[-1]["fields"] and last.split == "test"  # a default filled in


def test_without_keys_every_row_is_stored():
    project = ProjectFactory()
    rows = ({"project_id": project.pk, "external_id": f"e{i}", "label": "x", "fields": {}}
            for i in range(BATCH + 1))  # fmt: skip
    assert insert_rows(Example, rows, returning_ids=False) == []
    assert Example.objects.filter(project=project).count() == BATCH + 1


def test_rows_read_ahead_are_each_querys_own_in_the_same_transaction():
    # The rows are not committed: the thread reading ahead must share this transaction.
    project = ProjectFactory()
    insert_rows(Example, ({"project_id": project.pk, "external_id": f"e{i:03}", "label": "x",
                           "fields": {"text": f"t{i}"}} for i in range(250)))  # fmt: skip
    examples = Example.objects.filter(project=project).order_by("external_id")
    queries = [examples[start : start + 100].values_list("external_id", "fields")
               for start in range(0, 250, 100)]  # fmt: skip
    with Beside() as db:
        pending = [db.read(query, json_columns=[1]) for query in queries]
        read = [db.result(rows) for rows in pending]
    assert read == [plain_rows(query, json_columns=[1]) for query in queries]
    assert [len(rows) for rows in read] == [100, 100, 50]
    assert read[2][-1] == ["e249", {"text": "t249"}]


def test_an_error_in_a_query_read_ahead_reaches_the_caller():
    project = ProjectFactory()
    Example.objects.create(project=project, external_id="not-a-number", label="x", fields={})
    good = Example.objects.filter(project=project).values_list("external_id")
    bad = Example.objects.annotate(n=Cast("external_id", IntegerField())).values_list("n")
    with pytest.raises(DataError), transaction.atomic(), Beside() as db:
        reads = [db.read(good), db.read(bad)]
        assert db.result(reads[0]) == [("not-a-number",)]
        db.result(reads[1])


def test_an_error_in_a_later_batch_reaches_the_caller_and_stores_nothing():
    project = ProjectFactory()
    rows = [{"project_id": project.pk, "external_id": f"e{i}", "label": "x", "fields": {}}
            for i in range(BATCH + 10)]  # fmt: skip
    rows[-1]["external_id"] = "e3"  # a repeat, in the second batch: sent while nothing waits
    with pytest.raises(IntegrityError), transaction.atomic():
        insert_rows(Example, rows)
    assert not Example.objects.filter(project=project).exists()


def test_rows_stored_beside_are_seen_by_the_reads_after_them():
    project = ProjectFactory()
    rows = [{"project_id": project.pk, "external_id": f"e{i}", "label": "x", "fields": {"n": i}}
            for i in range(30)]  # fmt: skip
    examples = Example.objects.filter(project=project).values_list("external_id", "fields")
    with Beside() as db:
        stores = [db.store(Example, rows[:10]), db.store(Example, rows[10:])]
        read = db.read(examples.order_by("fields__n"), json_columns=[1])
        assert [db.result(s) for s in stores] == [None, None]
        assert db.result(read) == [[f"e{i}", {"n": i}] for i in range(30)]


def test_an_error_in_rows_stored_beside_reaches_the_caller_before_the_reads_after_them():
    project = ProjectFactory()
    Example.objects.create(project=project, external_id="e1", label="x", fields={})
    repeat = [{"project_id": project.pk, "external_id": "e1", "label": "x", "fields": {}}]
    with pytest.raises(IntegrityError), transaction.atomic(), Beside() as db:
        storing = db.store(Example, repeat)
        db.read(Example.objects.values_list("external_id"))  # fails too, on PostgreSQL
        db.result(storing)
    assert Example.objects.filter(project=project).count() == 1


def test_the_collector_runs_again_after_bulk_work_even_when_it_fails():
    with pytest.raises(ValueError), collector_paused():
        assert not gc.isenabled()
        raise ValueError
    assert gc.isenabled()


def test_present_values_are_those_the_project_holds_among_many_asked():
    project, other = ProjectFactory(), ProjectFactory()
    rows = [{"project_id": project.pk, "external_id": f"e{i}", "label": "x", "fields": {}}
            for i in range(0, 30, 3)]  # fmt: skip
    insert_rows(Example, rows, returning_ids=False)
    insert_rows(Example, [{**rows[0], "project_id": other.pk, "external_id": "e1"}])
    asked = [f"e{i}" for i in range(2 * BATCH + 1)]  # more than one IN list's worth
    held = present_values(Example, "external_id", asked, project_id=project.pk)
    assert held == {row["external_id"] for row in rows}  # e1 is the other project's
    assert present_values(Example, "external_id", [], project_id=project.pk) == set()
