"""Bulk inserts (COPY on PostgreSQL) across batch boundaries: every row stored, each key the
row's own, in order, from a generator as from a list."""

import pytest

from annotation.bulk import BATCH, insert_rows
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
