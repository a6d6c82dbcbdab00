"""End to end through real Celery workers on Redis, including a worker killed mid-run."""

import os
import signal

import pytest

from evaluation.models import EvaluationRun, ModelSpec, Prediction
from evaluation.runs.services import evaluation_enqueue
from tests.workers import start_worker, stop, wait_for, worker_on_test_db

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def env(released, settings, tmp_path):  # type: ignore[no-untyped-def]
    return worker_on_test_db(
        settings.MEDIA_ROOT, tmp_path / "var", CELERY_VISIBILITY_TIMEOUT="3",
        CELERY_RESTORE_INTERVAL="1", HF_HUB_OFFLINE="1",
    )  # fmt: skip


def status(run: EvaluationRun) -> str:
    run.refresh_from_db()
    return run.status


def test_worker_scores_a_tiny_transformers_model(project, released, tiny_model, env, tmp_path):
    spec = ModelSpec.objects.create(
        project=project, name="tiny", kind="hf-sequence-classification", source=str(tiny_model),
        batch_size=4, device="cpu",
    )  # fmt: skip
    worker = start_worker(env, tmp_path / "worker.log")
    try:
        run = evaluation_enqueue(release=released, model=spec, split="test", user=None)
        wait_for(lambda: status(run) in EvaluationRun.FINISHED, 120, "the run to finish")
    finally:
        stop(worker)
    log = (tmp_path / "worker.log").read_text()
    assert run.status == "succeeded", (run.error, log[-3000:])
    assert run.predictions.count() == 13 and run.done == 13
    assert 0 <= run.metrics["consistency"] <= 1 and "intervals" in run.metrics


def test_killed_worker_leaves_the_run_to_a_new_worker(project, released, env, tmp_path):
    """The whole worker is killed (SIGKILL): its message comes back only after the broker's
    visibility timeout (an hour, as by default here), so the next worker to start sweeps for
    runs with a stale heartbeat and takes this one over within seconds."""
    env = {**env, "CELERY_VISIBILITY_TIMEOUT": "3600"}
    spec = ModelSpec.objects.create(
        project=project, name="slow", kind="python", batch_size=1,
        source="tests.evaluation.rule_models:slow_keyword",
    )  # fmt: skip
    first = start_worker(env, tmp_path / "first.log")
    run = evaluation_enqueue(release=released, model=spec, split="test", user=None)
    try:
        wait_for(lambda: (run.refresh_from_db(), run.done >= 3)[1], 90, "the run to progress")
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
    killed_at = run.done
    assert run.status == "running" and killed_at < 13
    second = start_worker(env, tmp_path / "second.log")
    try:
        wait_for(lambda: status(run) in EvaluationRun.FINISHED, 60, "the run to finish")
    finally:
        stop(second)
    assert run.status == "succeeded", (tmp_path / "second.log").read_text()[-3000:]
    assert run.attempts == 2
    examples = list(Prediction.objects.filter(run=run).values_list("example", flat=True))
    assert len(examples) == len(set(examples)) == 13
    assert run.metrics["consistency"] == pytest.approx(5 / 6)
