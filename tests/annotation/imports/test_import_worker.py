"""A background import through real Celery workers on Redis: a worker killed in the middle of
an import leaves it to the next worker, which imports it whole, exactly once."""

import json
import os
import signal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction

from annotation.imports.background import import_later
from annotation.models import Example, ImportJob
from tests.workers import start_worker, stop, wait_for, worker_on_test_db

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
ROWS = 60_000


@pytest.fixture
def env(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"
    # Its own message would come back only in an hour: the sweep must find it.
    return worker_on_test_db(
        settings.MEDIA_ROOT, tmp_path / "var", CELERY_VISIBILITY_TIMEOUT="3600"
    )


def job_now(job: ImportJob) -> ImportJob:
    job.refresh_from_db()
    return job


def test_a_worker_killed_mid_import_leaves_it_to_the_next_worker(project, env, tmp_path):
    rows = [{"id": f"r{n}", "text": f"Review number {n}, neither good nor bad.",
             "label": "positive" if n % 2 else "negative"} for n in range(ROWS)]  # fmt: skip
    content = "\n".join(json.dumps(row) for row in rows).encode()
    first = start_worker(env, tmp_path / "first.log")
    with transaction.atomic():
        job = import_later(
            project=project, user=None, kind=ImportJob.Kind.ORIGINALS,
            files={"file": SimpleUploadedFile("big.jsonl", content)}, options={},
        )  # fmt: skip
    try:
        wait_for(lambda: job_now(job).heartbeat_at is not None, 60, "the import to start")
        wait_for(lambda: job_now(job).status == "running" and job.heartbeat_at != job.started_at,
                 30, "a heartbeat during the import")  # fmt: skip
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
    assert job_now(job).status == "running" and job.attempts == 1
    assert not Example.objects.filter(project=project).exists()  # nothing half-imported
    second = start_worker(env, tmp_path / "second.log")
    try:
        wait_for(lambda: job_now(job).finished, 120, "the next worker to finish the import")
    finally:
        stop(second)
    assert job.status == "succeeded", (tmp_path / "second.log").read_text()[-3000:]
    assert job.attempts == 2 and job.result["imported"] == ROWS
    ids = list(Example.objects.filter(project=project).values_list("external_id", flat=True))
    assert len(ids) == len(set(ids)) == ROWS  # each row exactly once
