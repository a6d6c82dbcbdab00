"""The evaluation worker's Celery tasks, on the `evaluation` queue, registered with the worker
from here (Celery looks for `<app>.tasks`): a run's and its shards' (runs/tasks.py), an
analysis's (analyses/tasks.py), and here the health check and the sweep of jobs whose worker
died. Each is named by its module; every evaluation task ("evaluation.*") goes to that queue."""

from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from annotation import jobs
from annotation.data.services.search_index import projects_waiting
from annotation.data.tasks import index_search_task
from annotation.imports.tasks import run_import_task
from annotation.models import ImportJob
from evaluation.analyses.tasks import run_analysis_task
from evaluation.models import Analysis, EvaluationRun, RunShard
from evaluation.runs.tasks import run_evaluation_task, run_shard_task

__all__ = ["ping", "run_analysis_task", "run_evaluation_task", "run_shard_task", "sweep_stale_jobs"]


@shared_task(acks_late=True)
def ping(token: str) -> str:
    """A round trip for health checks: the worker answers with the token it was sent."""
    return f"pong:{token}"


@shared_task(acks_late=True)
def sweep_stale_jobs() -> None:
    """Send again the imports, runs and analyses whose worker died (a stale heartbeat): their
    own messages come back only after the broker's visibility timeout, an hour by default.
    And index the rows that imports left out of the text search, which a worker that died
    while indexing them leaves (annotation.data.services.search_index)."""
    for job_id in jobs.stale_ids(ImportJob):
        run_import_task.delay(job_id)
    for run_id in jobs.stale_ids(EvaluationRun):
        run_evaluation_task.delay(run_id)
    for shard_id in jobs.stale_ids(RunShard):
        run_shard_task.delay(shard_id)
    for analysis_id in jobs.stale_ids(Analysis):
        run_analysis_task.delay(analysis_id)
    for project_id in projects_waiting():
        index_search_task.delay(project_id)


@worker_ready.connect
def sweep_once_started(**_: Any) -> None:
    """A worker that starts (after one was killed, say) looks for orphaned jobs once their
    heartbeats have had time to go stale."""
    sweep_stale_jobs.apply_async(countdown=settings.EVALUATION_STALE_SECONDS + 1)
