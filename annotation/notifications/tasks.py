"""The notifications' periodic task, on the `imports` queue as every annotation task
(annotation.tasks registers it with the worker; CELERY_BEAT_SCHEDULE sends it)."""

from celery import shared_task

from annotation.notifications.services import digests_send


@shared_task
def send_digests_task() -> int:
    """E-mail the digests that are due (services.digests_send); how many were sent."""
    return digests_send()
