"""Comments: a thread on each perturbation, written by its project's admins and experts
(docs/workflows.md, "Comments"). Validators read a thread only after their vote on the item,
and never its authors' names."""

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from annotation.models.perturbations import Perturbation
from annotation.models.projects import Project

# The most characters a comment's Markdown may have.
MAX_CHARS = 10_000


class Comment(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="comments")
    perturbation = models.ForeignKey(
        Perturbation, on_delete=models.CASCADE, related_name="comments"
    )
    # Kept when the author's account goes: the thread reads "a former member".
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    body = models.TextField()  # Markdown, shown sanitised (annotation/text/fields.py)
    created_at = models.DateTimeField(default=timezone.now)
    edited_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["perturbation", "created_at"], name="comment_thread"),
        ]
        constraints = [
            models.CheckConstraint(condition=~models.Q(body=""), name="comment_body_not_empty"),
        ]

    def __str__(self) -> str:
        return f"comment {self.pk} on perturbation {self.perturbation_id}"

    def is_by(self, user: Any) -> bool:
        return bool(user.is_authenticated) and self.author_id == user.pk
