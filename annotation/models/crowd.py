"""Validation with a crowd (docs/validation.md): gold items for the qualification test and the
checks while working, study links for crowd platforms, and their participants."""

import re

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.models.examples import Example
from annotation.models.projects import Project
from annotation.models.validation import ValidationItem


class GoldItem(models.Model):
    """An item whose right response is known: an accepted perturbation, an original with its
    label or answers, or a comprehension question the admin wrote. Validators see its fields
    only, under a random id drawn like a validation item's, so it looks like any item."""

    class Kind(models.TextChoices):
        POOL = "pool"  # drawn from the project's accepted items and originals
        QUESTION = "question"  # written by the admin (qualification_questions)

    id = models.BigIntegerField(primary_key=True)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="gold_items")
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.POOL)
    source_item = models.ForeignKey(
        ValidationItem, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    source_example = models.ForeignKey(
        Example, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # The author of a perturbation: never served to them.
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    position = models.PositiveIntegerField(default=0)  # a question's place in the settings
    fields = models.JSONField()
    gold_label = models.CharField(max_length=100, blank=True)
    gold_answers = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["pool", "question"]), name="gold_kind_valid"
            ),
            models.UniqueConstraint(
                fields=["project", "source_item"],
                condition=Q(source_item__isnull=False),
                name="gold_item_once",
            ),
            models.UniqueConstraint(
                fields=["project", "source_example"],
                condition=Q(source_example__isnull=False),
                name="gold_example_once",
            ),
        ]

    def __str__(self) -> str:
        return f"gold item {self.pk}"


class GoldAnswer(models.Model):
    """A validator's response to a gold item: in the qualification test (its attempt) or while
    working (attempt 0)."""

    class Phase(models.TextChoices):
        QUALIFICATION = "qualification"
        GOLD = "gold"

    gold_item = models.ForeignKey(GoldItem, on_delete=models.CASCADE, related_name="answers")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    validator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    phase = models.CharField(max_length=16, choices=Phase.choices)
    attempt = models.PositiveSmallIntegerField(default=0)
    label = models.CharField(max_length=100, blank=True)
    answer = models.TextField(blank=True)
    flags = models.JSONField(default=list, blank=True)
    seconds_spent = models.PositiveIntegerField(default=0)
    correct = models.BooleanField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["gold_item", "validator", "attempt"], name="gold_answer_once"
            ),
            models.CheckConstraint(
                condition=Q(phase__in=["qualification", "gold"]), name="gold_phase_valid"
            ),
        ]
        indexes = [models.Index(fields=["project", "validator"], name="gold_answer_validator")]

    def __str__(self) -> str:
        return f"{self.validator} answered gold item {self.gold_item_id}"


class Study(models.Model):
    """A study link of a project (/p/<slug>/study/<token>/) that a crowd platform sends its
    participants to, with the items each labels and the code they take back."""

    class Platform(models.TextChoices):
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Mechanical Turk"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="studies")
    name = models.CharField(max_length=200)
    platform = models.CharField(max_length=16, choices=Platform.choices)
    token = models.CharField(max_length=64, unique=True)
    items_per_participant = models.PositiveIntegerField()
    # The most participants the link makes (none: no cap); past it, a page says it is full.
    max_participants = models.PositiveIntegerField(null=True, blank=True)
    completion_code = models.CharField(max_length=64)
    # The code for a participant whose work the gates ended (failed test, paused): the platform
    # records them apart, and the payments CSV says they did not pass.
    ended_code = models.CharField(max_length=64)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "studies"
        constraints = [
            models.CheckConstraint(
                condition=Q(platform__in=["prolific", "mturk"]), name="study_platform_valid"
            ),
            models.CheckConstraint(
                condition=Q(items_per_participant__gte=1), name="study_items_positive"
            ),
            models.CheckConstraint(
                condition=Q(max_participants__isnull=True) | Q(max_participants__gte=1),
                name="study_max_participants_positive",
            ),
        ]

    def __str__(self) -> str:
        return f"study {self.name} of {self.project.slug}"


class Participant(models.Model):
    """A crowd participant's account in one project: made by the study link from the
    platform's id, which opens no second account in the project."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="participants")
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participants")
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="participant"
    )
    external_id = models.CharField(max_length=64)  # PROLIFIC_PID or workerId
    platform_study = models.CharField(max_length=64, blank=True)  # STUDY_ID
    platform_session = models.CharField(max_length=64, blank=True)  # SESSION_ID
    assignment = models.CharField(max_length=64, blank=True)  # assignmentId
    started_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["started_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="participant_once_per_project"
            )
        ]

    def __str__(self) -> str:
        return f"participant {self.external_id} of {self.project.slug}"

    @staticmethod
    def username_for(study: Study, external_id: str) -> str:
        """A participant account's username: its platform, project and platform id. Nobody
        makes one by hand (reserved_username), or that participant's link could not."""
        return f"{study.platform}-{study.project_id}-{external_id}"

    @staticmethod
    def reserved_username(username: str) -> bool:
        """Whether `username` is in the participants' namespace (any case, as usernames)."""
        return RESERVED_USERNAME.match(username) is not None


RESERVED_USERNAME = re.compile(
    rf"({'|'.join(Study.Platform.values)})-[0-9]+-", re.IGNORECASE | re.ASCII
)
