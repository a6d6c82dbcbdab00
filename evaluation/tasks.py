"""Celery tasks of the evaluation worker. They run on the `evaluation` queue."""

from celery import shared_task


@shared_task(acks_late=True)
def ping(token: str) -> str:
    """A round trip for health checks: the worker answers with the token it was sent."""
    return f"pong:{token}"
