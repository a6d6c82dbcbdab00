"""Celery tasks of the evaluation worker. They run on the `evaluation` queue."""

from celery import shared_task


@shared_task(acks_late=True)
def ping(token: str) -> str:
    """A round trip for health checks: the worker answers with the token it was sent."""
    return f"pong:{token}"


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_evaluation_task(run_id: int) -> None:
    """Score one evaluation run. A worker killed mid-run leaves the message unacknowledged, so
    the run is redelivered; evaluation_execute takes over only runs whose worker is gone."""
    from evaluation.services import evaluation_execute

    evaluation_execute(run_id)
