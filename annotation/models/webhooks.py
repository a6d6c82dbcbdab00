"""Webhooks (README, "Webhooks"): the addresses a project's admins register for its events,
each event's delivery to one of them, and every attempt of a delivery with its answer."""

from django.conf import settings
from django.db import models

from annotation.models.projects import Project

EVENTS = (
    "release.published",
    "run.succeeded",
    "run.failed",
    "import.finished",
    "perturbation.disputed",
    "item.resolved",
)
# The event "send a test event" sends, whatever the webhook's events.
TEST_EVENT = "webhook.test"
# The most characters kept of an answer's body, and of the error of an attempt.
EXCERPT_CHARS = 1000


class Webhook(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=2000)
    events = models.JSONField(default=list)  # a subset of EVENTS
    # The signing secret ("whsec_" and base64), encrypted (annotation/outbound/secrets.py); it
    # is shown once, when the webhook is made.
    secret_encrypted = models.TextField()
    # Registered by staff: its host is not checked (an internal address is allowed).
    trusted = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]

    def __str__(self) -> str:
        return self.url

    def wants(self, event: str) -> bool:
        return event == TEST_EVENT or event in self.events


class WebhookDelivery(models.Model):
    """One event sent to one webhook: its message, signed afresh at each attempt, and how its
    attempts went."""

    class Status(models.TextChoices):
        PENDING = "pending"  # its next attempt is queued
        SUCCEEDED = "succeeded"  # an attempt had a 2xx answer
        FAILED = "failed"  # every attempt failed, or its host was refused

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    message_id = models.CharField(max_length=40, unique=True)  # webhook-id: "msg_" and hex
    event = models.CharField(max_length=40)
    payload = models.JSONField()  # the body: {"type", "timestamp", "data"}
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-pk"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=["pending", "succeeded", "failed"]),
                name="webhook_delivery_status",
            )
        ]

    def __str__(self) -> str:
        return f"{self.event} {self.message_id}"


class WebhookAttempt(models.Model):
    """One try of a delivery and its answer: the status code and an excerpt of the body, or
    the error that left no answer (a refused host, a dropped connection, the deadline)."""

    delivery = models.ForeignKey(
        WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_rows"
    )
    number = models.PositiveSmallIntegerField()
    sent_at = models.DateTimeField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    body_excerpt = models.TextField(blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number"], name="webhook_attempt_number")
        ]

    def __str__(self) -> str:
        return f"attempt {self.number} of {self.delivery_id}"
