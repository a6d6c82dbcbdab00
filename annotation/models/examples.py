"""Originals, exactly as imported, and the batches they came in."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.models.config import SPLITS
from annotation.models.jobs import Job
from annotation.models.projects import Project


class ImportBatch(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="import_batches")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(default=timezone.now)
    kind = models.CharField(max_length=32, default="originals")
    source_name = models.CharField(max_length=255)
    format = models.CharField(max_length=16)
    mapping = models.JSONField(default=dict, blank=True)
    row_count = models.PositiveIntegerField(default=0)
    sha256 = models.CharField(max_length=64)
    # Lines left out of an import asked to skip bad lines: {"line", "message", "text"}
    skipped = models.JSONField(default=list, blank=True)
    # Every warning of a set import, ungrouped: {"file", "line", "message"}
    warnings = models.JSONField(default=list, blank=True)
    # Megabytes for a large file with many warnings: lists of imports and of their rows leave
    # them out (.defer), and count them in the database where they show a count.
    BULKY = ("skipped", "warnings")

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "import batches"

    def __str__(self) -> str:
        return f"{self.source_name} ({self.row_count} rows)"


class ImportJob(Job):
    """An import too large to run inside a request (IMPORT_BACKGROUND_BYTES), run on a worker:
    its files wait under MEDIA_ROOT/imports/ until then. It is atomic as any import: it
    succeeds whole, or fails with every problem on its line and nothing imported. Its
    lifecycle is every job's (annotation.jobs): a heartbeat while it runs, taken over by the
    next worker when its own died."""

    class Kind(models.TextChoices):
        ORIGINALS = "originals"
        SETS = "sets"
        VOTES = "votes"
        PUBLISHED = "published"  # a published contrast set, into an existing project

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="import_jobs")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # {form field: {"path": relative to MEDIA_ROOT, "name": the uploaded file's name}}
    files = models.JSONField(default=dict)
    options = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)  # the API's answer, once succeeded
    errors = models.JSONField(default=list, blank=True)  # [{"line", "message"}] once failed
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return f"{self.kind} import {self.pk} ({self.status})"


# An original imported as a set of its own, with no perturbation (NLVR2's one-line groups): a
# release holds it as a set of one, which its dataset's script scores (consistent when right).
SET_OF_ONE = "set_of_one"


class Example(models.Model):
    """An original instance exactly as imported. It is never edited after import."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="examples")
    external_id = models.CharField(max_length=255)
    fields = models.JSONField()
    # A classification example has a label; a free-text one (docs/task-types.md) its answers
    # instead, or none yet: an original built from a published perturbation's question (DROP
    # without its test set) waits for an expert to write its answer (`waits_for_answer`).
    label = models.CharField(max_length=100, blank=True)
    answers = models.JSONField(default=list, blank=True)
    split = models.CharField(max_length=8, default="test")
    metadata = models.JSONField(default=dict, blank=True)
    batch = models.ForeignKey(
        ImportBatch,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="examples",
        db_index=False,
    )
    # In the Data page's text-search index (migration 0024): an import writes its rows False,
    # so that its transaction builds no trigram entries, and a worker then sets them True
    # (annotation.data.services.search_index); the search reads both kinds of row.
    searchable = models.BooleanField(default=True, db_default=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="example_external_id_unique"
            ),
            models.CheckConstraint(condition=Q(split__in=SPLITS), name="example_split_valid"),
            models.CheckConstraint(condition=~Q(external_id=""), name="example_id_not_empty"),
        ]
        indexes = [
            models.Index(fields=["project", "split", "label"]),
            # The Data page's newest-first pages (keyset on id within a project)
            models.Index(fields=["project", "id"], name="example_project_id"),
            models.Index(fields=["batch", "id"], name="example_batch_id"),
            models.Index(
                fields=["project", "id"], condition=Q(searchable=False), name="example_unsearchable"
            ),
        ]

    def __str__(self) -> str:
        return self.external_id

    @property
    def waits_for_answer(self) -> bool:
        return not self.label and not self.answers
