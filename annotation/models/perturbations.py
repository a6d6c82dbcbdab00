"""Claims on pivots, and the perturbations experts write with their revisions."""

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.models.examples import Example, ImportBatch
from annotation.models.projects import Project, Tag


def release_id(external_id: str, pk: Any) -> str:
    """A perturbation's id in releases: its published id, or p-<pk>."""
    return external_id or f"p-{pk}"


class Claim(models.Model):
    """An expert's time-limited reservation of a pivot. One row per pivot, taken over on expiry."""

    example = models.OneToOneField(Example, on_delete=models.CASCADE, related_name="claim")
    expert = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    # When the editor was last opened on this pivot: the server's measure of time spent.
    opened_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(expires_at__gt=models.F("opened_at")), name="claim_expires_after_open"
            )
        ]

    def __str__(self) -> str:
        return f"{self.expert} holds {self.example} until {self.expires_at:%H:%M}"

    def is_live(self, now: Any = None) -> bool:
        return self.expires_at > (now or timezone.now())


class Perturbation(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft"
        SUBMITTED = "submitted"
        ACCEPTED = "accepted"
        DISPUTED = "disputed"
        REJECTED = "rejected"
        NO_MAJORITY = "no_majority"
        WITHDRAWN = "withdrawn"

    RESOLVED = (Status.ACCEPTED, Status.DISPUTED, Status.REJECTED, Status.NO_MAJORITY)

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="perturbations")
    pivot = models.ForeignKey(Example, on_delete=models.PROTECT, related_name="perturbations")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="perturbations"
    )
    # The id a published set gave this perturbation (kept by imports and releases); may equal its
    # original's, as in ROPES. Empty for perturbations written here: releases call them p-<pk>.
    external_id = models.CharField(max_length=255, blank=True)
    fields = models.JSONField()
    label = models.CharField(max_length=100, blank=True)
    # Free-text projects: the author's answers, and the validators' once disputed.
    answers = models.JSONField(default=list, blank=True)
    majority_answers = models.JSONField(default=list, blank=True)
    tags = models.ManyToManyField(Tag, blank=True, related_name="perturbations")
    # The import it came with (a set import), or else its original's: the Data page's import
    # filter, and what undoing that import removes with the originals.
    batch = models.ForeignKey(
        ImportBatch,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="perturbations",
        db_index=False,
    )
    rationale = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    guideline_version = models.PositiveIntegerField(default=0)
    # Active seconds the editor reported, capped by the server's wall-clock measure.
    seconds_spent = models.PositiveIntegerField(default=0)
    wall_seconds = models.PositiveIntegerField(default=0)
    edit_distance = models.FloatField(default=0.0)
    tokens_changed = models.PositiveIntegerField(default=0)
    # Set by an admin to allow an edit above the project's max_edit_ratio.
    allow_large_edit = models.BooleanField(default=False)
    # The majority label once validation resolved it (may differ from `label` when disputed).
    majority_label = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    submitted_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    # In the Data page's text-search index, as Example.searchable.
    searchable = models.BooleanField(default=True, db_default=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    status__in=[
                        "draft",
                        "submitted",
                        "accepted",
                        "disputed",
                        "rejected",
                        "no_majority",
                        "withdrawn",
                    ]
                ),
                name="perturbation_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(status="draft") | Q(submitted_at__isnull=False) | Q(status="withdrawn"),
                name="perturbation_submitted_has_time",
            ),
            models.CheckConstraint(
                condition=Q(edit_distance__gte=0) & Q(edit_distance__lte=1),
                name="perturbation_edit_distance_range",
            ),
        ]
        indexes = [
            models.Index(fields=["project", "status"]),
            models.Index(fields=["project", "author", "status"]),
            # The Data page's newest-first pages (keyset on id within a project)
            models.Index(fields=["project", "id"], name="perturbation_project_id"),
            models.Index(fields=["batch", "id"], name="perturbation_batch_id"),
            models.Index(
                fields=["project", "id"],
                condition=Q(searchable=False),
                name="perturbation_unsearchable",
            ),
        ]

    def __str__(self) -> str:
        return f"perturbation {self.pk} of {self.pivot}"

    @property
    def release_id(self) -> str:
        return release_id(self.external_id, self.pk)

    @property
    def is_resolved(self) -> bool:
        return self.status in self.RESOLVED


class PerturbationRevision(models.Model):
    """An earlier state of a draft, kept when the draft changes."""

    perturbation = models.ForeignKey(
        Perturbation, on_delete=models.CASCADE, related_name="revisions"
    )
    number = models.PositiveIntegerField()
    fields = models.JSONField()
    label = models.CharField(max_length=100, blank=True)
    answers = models.JSONField(default=list, blank=True)
    tags = models.JSONField(default=list)
    rationale = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["perturbation", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["perturbation", "number"], name="revision_number_unique"
            )
        ]

    def __str__(self) -> str:
        return f"revision {self.number} of perturbation {self.perturbation_id}"
