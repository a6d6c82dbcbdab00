"""The import's Celery task, on the `imports` queue (annotation.tasks registers it with the
worker). Its name is the one it had in annotation/tasks.py, so that messages already queued,
and the route of "annotation.tasks.*", still find it."""

from celery import shared_task

from annotation import jobs
from annotation.imports.services.running import run_import


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
)
def run_import_task(self, job_id: int) -> None:  # type: ignore[no-untyped-def]
    """Run one queued import. It commits whole or not at all, so a redelivery after a worker
    died (or the sweep's, evaluation.tasks.sweep_stale_jobs), or a retry after the database
    went away, runs it again from the start; one that finds it alive elsewhere waits. Its end
    is announced by run_import."""
    jobs.run_or_retry(self, run_import, job_id)
