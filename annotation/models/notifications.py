"""A user's notifications (README, "Notifications"): what happened to their work or their
projects, read in the inbox of the page header, and each user's choices of which kinds come
and whether by e-mail (one digest an hour at most)."""

from django.conf import settings
from django.db import models

# Each kind a user may turn off, with the words the preferences show. A validator is never
# told anything about an item they may still vote on: every kind speaks to the author of the
# work, the one who started the job, or (a release) names its version alone.
KINDS = {
    "perturbation.disputed": "Your perturbation was disputed by the validators",
    "perturbation.decided": "Your perturbation was decided (accepted or rejected)",
    "perturbation.sent_back": "Your perturbation was sent back to validation",
    "perturbation.commented": "A comment on your perturbation",
    "mention": "You were mentioned in a comment",
    "import.finished": "Your import finished or failed",
    "run.finished": "Your evaluation run finished or failed",
    "analysis.finished": "Your analysis finished or failed",
    "release.published": "A release of your project was published",
}
KIND_CHOICES = [(kind, kind) for kind in KINDS]  # the API's enum (NotificationKindEnum)


class Notification(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    project = models.ForeignKey(
        "annotation.Project", on_delete=models.CASCADE, related_name="notifications"
    )
    kind = models.CharField(max_length=40, choices=KIND_CHOICES)
    text = models.CharField(max_length=500)
    url = models.CharField(max_length=500, blank=True)  # a path on this site, or ""
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)
    emailed_at = models.DateTimeField(null=True, blank=True)  # in a digest

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(
                fields=["user", "id"], condition=models.Q(read_at=None), name="notification_unread"
            ),
            models.Index(fields=["user", "-id"], name="notification_inbox"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} for user {self.user_id}"


class NotificationPreference(models.Model):
    """One user's choices; a user without a row gets every kind, in the inbox alone."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_preference"
    )
    kinds = models.JSONField(default=list)  # the kinds this user wants, of KINDS
    email = models.BooleanField(default=False)  # a digest of the unread ones, hourly at most
    last_digest_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"notification choices of user {self.user_id}"

    @classmethod
    def of(cls, user: object) -> "NotificationPreference":
        """The user's choices, unsaved defaults where they have made none."""
        found = cls.objects.filter(user=user).first()
        return found or cls(user=user, kinds=list(KINDS), email=False)  # type: ignore[misc]

    def wants(self, kind: str) -> bool:
        return kind in self.kinds
