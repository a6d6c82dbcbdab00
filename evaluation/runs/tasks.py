"""A run's Celery tasks, on the `evaluation` queue (evaluation.tasks registers them with the
worker, under the names they have always had)."""

from celery import shared_task
from django.db import transaction

from annotation import jobs
from annotation.webhooks import events
from evaluation.runs.execute import run_evaluation, run_shard
from evaluation.runs.shards import shard_finished


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
)
def run_evaluation_task(self, run_id: int) -> None:  # type: ignore[no-untyped-def]
    """Score one evaluation run. A worker killed mid-run leaves the message unacknowledged, so
    the run is redelivered; a delivery that finds the run alive on another worker waits."""
    run = jobs.run_or_retry(self, run_evaluation, run_id)
    transaction.on_commit(lambda: events.run_finished(run), robust=True)


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
)
def run_shard_task(self, shard_id: int) -> None:  # type: ignore[no-untyped-def]
    """Score one shard of a run; the last shard to succeed sends the run, which merges them."""
    shard = jobs.run_or_retry(self, run_shard, shard_id)
    if shard is not None and shard_finished(shard):
        run_evaluation_task.delay(shard.run_id)
