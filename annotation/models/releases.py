"""Immutable releases, their entries, and annotators' public pseudonyms."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.models.config import SPLITS
from annotation.models.perturbations import Perturbation
from annotation.models.projects import Project


class Release(models.Model):
    """An immutable, versioned bundle of accepted contrast sets. Written once, never changed."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="releases")
    version = models.CharField(max_length=32)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(default=timezone.now)
    # split_strategy, seed, proportions, min_agreement: everything needed to reproduce it.
    options = models.JSONField(default=dict)
    counts = models.JSONField(default=dict)
    statistics = models.JSONField(default=dict)
    manifest = models.JSONField(default=dict)
    bundle = models.CharField(max_length=255, blank=True)  # path under MEDIA_ROOT
    sha256 = models.CharField(max_length=64, blank=True)  # of the bundle zip
    perturbations = models.ManyToManyField(
        Perturbation, through="ReleaseEntry", related_name="releases", blank=True
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "version"], name="release_version_unique"),
            models.CheckConstraint(condition=~Q(version=""), name="release_version_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.project.slug} {self.version}"


class ReleaseEntry(models.Model):
    """One released perturbation, with the label and split it was released under."""

    # Its unique constraint, which leads with the release, serves lookups by release.
    release = models.ForeignKey(
        Release, on_delete=models.CASCADE, related_name="entries", db_index=False
    )
    perturbation = models.ForeignKey(
        Perturbation, on_delete=models.PROTECT, related_name="release_entries"
    )
    set_id = models.CharField(max_length=255)
    split = models.CharField(max_length=8)
    label = models.CharField(max_length=100, blank=True)
    answers = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["release", "perturbation"], name="release_entry_unique"
            ),
            models.CheckConstraint(condition=Q(split__in=SPLITS), name="release_entry_split"),
        ]

    def __str__(self) -> str:
        return f"{self.perturbation_id} in {self.release_id}"


class Pseudonym(models.Model):
    """A stable public name for an annotator in a project's releases, e.g. "expert-3"."""

    class Kind(models.TextChoices):
        EXPERT = "expert"
        VALIDATOR = "validator"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="pseudonyms")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    number = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user", "kind"], name="pseudonym_unique"),
            models.UniqueConstraint(
                fields=["project", "kind", "number"], name="pseudonym_number_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind}-{self.number}"
