"""Celery tasks of the annotation side: large imports, on the `imports` queue."""

from celery import shared_task
from django.db import InterfaceError, OperationalError, connections

from annotation.imports.dispatch import run_import


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=10)
def run_import_task(self, job_id: int) -> None:  # type: ignore[no-untyped-def]
    """Run one queued import. It commits whole or not at all, so a redelivery after a worker
    died, or a retry after the database went away, runs it again from the start."""
    try:
        run_import(job_id)
    except (OperationalError, InterfaceError) as lost:
        connections.close_all()
        raise self.retry(exc=lost, countdown=10) from None
