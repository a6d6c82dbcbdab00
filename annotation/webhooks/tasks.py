"""A delivery's Celery task, on the `imports` queue with every annotation task (annotation.tasks
registers it with the worker)."""

from celery import shared_task

from annotation.webhooks.services import delivery_attempt


@shared_task(acks_late=True, reject_on_worker_lost=True)
def deliver_webhook_task(delivery_id: int, number: int = 1) -> None:
    """Attempt `number` of a delivery; a failed one queues the next after its delay (Standard
    Webhooks: retried with backoff, WEBHOOK_RETRY_DELAYS)."""
    delay = delivery_attempt(delivery_id, number)
    if delay is not None:
        deliver_webhook_task.apply_async((delivery_id, number + 1), countdown=delay)
