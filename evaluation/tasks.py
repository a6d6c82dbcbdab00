"""Celery tasks of the evaluation worker. They run on the `evaluation` queue."""

from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import InterfaceError, OperationalError, connections

from annotation import jobs
from annotation.imports.tasks import run_import_task
from annotation.jobs import RunBusy
from annotation.models import ImportJob
from evaluation.analyses.execute import run_analysis
from evaluation.models import Analysis, EvaluationRun, RunShard
from evaluation.runs.execute import run_evaluation, run_shard
from evaluation.runs.shards import shard_finished

# The database went away mid-job (a restart): the job's heartbeat goes stale, and a retry
# after EVALUATION_STALE_SECONDS takes it over from scratch.
DATABASE_GONE = (OperationalError, InterfaceError)


@shared_task(acks_late=True)
def ping(token: str) -> str:
    """A round trip for health checks: the worker answers with the token it was sent."""
    return f"pong:{token}"


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def run_evaluation_task(self, run_id: int) -> None:  # type: ignore[no-untyped-def]
    """Score one evaluation run. A worker killed mid-run leaves the message unacknowledged, so
    the run is redelivered; a delivery that finds the run alive on another worker waits."""
    try:
        run_evaluation(run_id)
    except DATABASE_GONE as lost:
        connections.close_all()
        raise self.retry(exc=lost, countdown=settings.EVALUATION_STALE_SECONDS) from None
    except RunBusy as busy:
        raise self.retry(exc=busy, countdown=settings.EVALUATION_STALE_SECONDS) from None


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def run_shard_task(self, shard_id: int) -> None:  # type: ignore[no-untyped-def]
    """Score one shard of a run; the last shard to succeed sends the run, which merges them."""
    try:
        shard = run_shard(shard_id)
    except DATABASE_GONE as lost:
        connections.close_all()
        raise self.retry(exc=lost, countdown=settings.EVALUATION_STALE_SECONDS) from None
    except RunBusy as busy:
        raise self.retry(exc=busy, countdown=settings.EVALUATION_STALE_SECONDS) from None
    if shard is not None and shard_finished(shard):
        run_evaluation_task.delay(shard.run_id)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def run_analysis_task(self, analysis_id: int) -> None:  # type: ignore[no-untyped-def]
    """Run one analysis; redelivered like an evaluation run if its worker dies."""
    try:
        run_analysis(analysis_id)
    except DATABASE_GONE as lost:
        connections.close_all()
        raise self.retry(exc=lost, countdown=settings.EVALUATION_STALE_SECONDS) from None
    except RunBusy as busy:
        raise self.retry(exc=busy, countdown=settings.EVALUATION_STALE_SECONDS) from None


@shared_task(acks_late=True)
def sweep_stale_jobs() -> None:
    """Send again the imports, runs and analyses whose worker died (a stale heartbeat): their
    own messages come back only after the broker's visibility timeout, an hour by default."""
    for job_id in jobs.stale_ids(ImportJob):
        run_import_task.delay(job_id)
    for run_id in jobs.stale_ids(EvaluationRun):
        run_evaluation_task.delay(run_id)
    for shard_id in jobs.stale_ids(RunShard):
        run_shard_task.delay(shard_id)
    for analysis_id in jobs.stale_ids(Analysis):
        run_analysis_task.delay(analysis_id)


@worker_ready.connect
def sweep_once_started(**_: Any) -> None:
    """A worker that starts (after one was killed, say) looks for orphaned jobs once their
    heartbeats have had time to go stale."""
    sweep_stale_jobs.apply_async(countdown=settings.EVALUATION_STALE_SECONDS + 1)
