"""An analysis's Celery task, on the `evaluation` queue (evaluation.tasks registers it with
the worker)."""

from celery import shared_task
from django.db import transaction

from annotation import jobs
from annotation.webhooks import events
from evaluation.analyses.execute import run_analysis


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
)
def run_analysis_task(self, analysis_id: int) -> None:  # type: ignore[no-untyped-def]
    """Run one analysis; redelivered like an evaluation run if its worker dies. Its starter
    is told once it succeeded or failed (notifications)."""
    analysis = jobs.run_or_retry(self, run_analysis, analysis_id)
    transaction.on_commit(lambda: events.analysis_finished(analysis), robust=True)
