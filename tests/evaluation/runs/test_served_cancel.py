"""A served run on a real Celery worker, against a server that drips its answers: a cancel cuts
the request in flight and frees the worker for the next job at once, rather than when the
server stops sending (docs/security.md)."""

import pytest

from evaluation.models import EvaluationRun, ModelSpec
from tests.evaluation.hostile import MODEL, HostileServer
from tests.evaluation.runs.test_served import start
from tests.workers import start_worker, stop, wait_for, worker_on_test_db

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_cancel_cuts_the_request_in_flight_and_frees_the_worker(sentiment, settings, tmp_path):
    project, release, root = sentiment
    server = HostileServer("slow-body")
    server.give_up = 300  # the drip would hold a worker five minutes
    slow = ModelSpec.objects.create(project=project, name="slow", kind="openai-compatible",
                                    source=MODEL, base_url=server.url, timeout=600)  # fmt: skip
    quick = ModelSpec.objects.create(project=project, name="keyword", kind="python",
                                     source="evaluation.runners.keyword:keyword")  # fmt: skip
    worker = start_worker(worker_on_test_db(settings.MEDIA_ROOT, tmp_path / "var"),
                          tmp_path / "worker.log")  # fmt: skip
    try:
        first = start(root, release, slow.pk)
        wait_for(server.asked.is_set, 60, "the run's first request to the server")
        assert root.post(f"/api/evaluations/{first}/cancel/").status_code == 200
        assert server.hung_up.wait(20), "the request in flight was left open"
        second = start(root, release, quick.pk)
        wait_for(lambda: EvaluationRun.objects.get(pk=second).finished, 60, "the next run")
    finally:
        log = stop(worker) + (tmp_path / "worker.log").read_text()
        server.close()
    assert EvaluationRun.objects.get(pk=first).status == "cancelled", log[-3000:]
    assert EvaluationRun.objects.get(pk=second).status == "succeeded", log[-3000:]
