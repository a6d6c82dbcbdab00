"""The voters' counters under a resolution, on the real PostgreSQL: locked for the rest of the
transaction, so that concurrent resolutions add to them one after another, and not rewritten by
the lock (each rewrite is a dead version that every vote's and every serve's lookup of the row
walks until a vacuum)."""

from typing import Any

import psycopg2
import pytest
from django.db import connection, transaction
from django.utils import timezone

from annotation.models import ValidatorStatus
from annotation.validation import sql
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db(transaction=True)


def row_version(status: ValidatorStatus) -> tuple[str, str]:
    """(xmin, ctid): the transaction that wrote the row's live version, and where it is."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT xmin::text, ctid::text FROM {ValidatorStatus._meta.db_table} WHERE id = %s",
            [status.pk],
        )
        return cursor.fetchone()


def other_session() -> Any:
    settings = connection.settings_dict
    other = psycopg2.connect(
        dbname=settings["NAME"],
        user=settings["USER"],
        password=settings["PASSWORD"],
        host=settings["HOST"],
        port=settings["PORT"] or 5432,
    )
    other.autocommit = True
    return other


def test_locking_the_counters_holds_existing_ones_without_rewriting_them():
    project = ProjectFactory()
    known, new = (member(project, f"v{n}", "validator") for n in range(2))
    status = ValidatorStatus.objects.create(project=project, validator=known, resolved_votes=3)
    written = row_version(status)
    other = other_session()
    try:
        with transaction.atomic():
            sql.lock_counters(
                project_id=project.pk, validator_ids=[known.pk, new.pk], now=timezone.now()
            )
            with other.cursor() as cursor, pytest.raises(psycopg2.errors.LockNotAvailable):
                cursor.execute(
                    f"SELECT 1 FROM {ValidatorStatus._meta.db_table} WHERE id = %s"
                    " FOR UPDATE NOWAIT",
                    [status.pk],
                )
    finally:
        other.close()
    assert row_version(status) == written
    assert ValidatorStatus.objects.get(pk=status.pk).resolved_votes == 3
    created = ValidatorStatus.objects.get(project=project, validator=new)
    assert (created.resolved_votes, created.agreed_votes, created.qualified) == (0, 0, True)
