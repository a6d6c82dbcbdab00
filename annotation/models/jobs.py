"""The fields every worker job shares: imports here, evaluation runs and analyses in the
evaluation app."""

from django.db import models
from django.utils import timezone


class Job(models.Model):
    """The lifecycle of work done on a worker (annotation.jobs), the same for imports,
    evaluation runs and analyses: queued, running, then succeeded, failed or cancelled, with
    progress and a heartbeat."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        CANCELLED = "cancelled"

    FINISHED = (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED)

    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # Written with progress; a stale heartbeat on a running job means its worker died.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]

    @property
    def finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0
