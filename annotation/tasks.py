"""Celery tasks of the annotation side: large imports, on the `imports` queue."""

from celery import shared_task

from annotation.imports.dispatch import run_import


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_import_task(job_id: int) -> None:
    """Run one queued import; a redelivery after a worker died runs it again whole."""
    run_import(job_id)
