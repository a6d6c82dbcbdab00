"""The annotation side's Celery tasks, registered with the worker from here (Celery looks for
`<app>.tasks`); each lives with its workflow, is named by its module, and goes to the `imports`
queue as every annotation task ("annotation.*"): large imports (imports/tasks.py), the
text-search index of what they wrote (data/tasks.py), the invitations' e-mails
(projects/tasks.py), webhooks' deliveries (webhooks/tasks.py) and the notifications' hourly
e-mailed digests (notifications/tasks.py, sent by the beat: CELERY_BEAT_SCHEDULE)."""

from annotation.data.tasks import index_search_task
from annotation.imports.tasks import run_import_task
from annotation.notifications.tasks import send_digests_task
from annotation.projects.tasks import send_invites_task
from annotation.webhooks.tasks import deliver_webhook_task

__all__ = [
    "deliver_webhook_task",
    "index_search_task",
    "run_import_task",
    "send_digests_task",
    "send_invites_task",
]
