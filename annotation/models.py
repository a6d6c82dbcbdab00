from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.schema import DEFAULT_SETTINGS, SPLITS


class Project(models.Model):
    class TaskType(models.TextChoices):
        CLASSIFICATION = "classification"
        MINIMAL_PAIR = "minimal_pair"
        FREE_TEXT = "free_text"

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=64, unique=True)
    task_type = models.CharField(
        max_length=20, choices=TaskType.choices, default=TaskType.CLASSIFICATION
    )
    # [{"name": "text", "kind": "text", "editable": true}, ...], in display order.
    fields = models.JSONField()
    # Ordered: the order gives the keyboard shortcuts.
    labels = models.JSONField()
    # Validators may choose these (e.g. "mixed"), but they are never a release label.
    extra_labels = models.JSONField(default=list, blank=True)
    settings = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(task_type__in=["classification", "minimal_pair", "free_text"]),
                name="project_task_type_valid",
            ),
            models.CheckConstraint(condition=~Q(slug=""), name="project_slug_not_empty"),
        ]

    def __str__(self) -> str:
        return self.name

    def setting(self, key: str) -> Any:
        return self.settings.get(key, DEFAULT_SETTINGS[key])

    def min_agreement_for(self, split: str) -> int:
        value = self.setting("release_min_agreement")
        if isinstance(value, dict):
            return int(value.get(split, DEFAULT_SETTINGS["release_min_agreement"]))
        return int(value)

    @property
    def field_names(self) -> list[str]:
        return [f["name"] for f in self.fields]

    @property
    def editable_field_names(self) -> list[str]:
        return [f["name"] for f in self.fields if f["editable"]]

    @property
    def all_labels(self) -> list[str]:
        return [*self.labels, *self.extra_labels]

    def current_guidelines(self) -> "Guidelines | None":
        return self.guidelines.order_by("-version").first()

    def current_guideline_version(self) -> int:
        latest = self.current_guidelines()
        return latest.version if latest else 0


class Tag(models.Model):
    """One phenomenon of the project's taxonomy (e.g. negation, tense)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="tags")
    name = models.CharField(max_length=64)
    description = models.TextField(blank=True)
    target = models.PositiveIntegerField(null=True, blank=True)
    example_edits = models.JSONField(default=list, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="tag_unique_per_project"),
            models.CheckConstraint(condition=~Q(name=""), name="tag_name_not_empty"),
        ]

    def __str__(self) -> str:
        return self.name


class Guidelines(models.Model):
    """One version of a project's Markdown guidelines. New text means a new version."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="guidelines")
    version = models.PositiveIntegerField()
    text = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["project", "-version"]
        verbose_name_plural = "guidelines"
        constraints = [
            models.UniqueConstraint(
                fields=["project", "version"], name="guidelines_version_unique"
            ),
            models.CheckConstraint(condition=Q(version__gte=1), name="guidelines_version_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.project.slug} guidelines v{self.version}"


class Membership(models.Model):
    """One role of one user in one project. A user holding several roles has several rows."""

    class Role(models.TextChoices):
        ADMIN = "admin"
        EXPERT = "expert"
        VALIDATOR = "validator"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["project", "user", "role"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "user", "role"], name="membership_role_unique"
            ),
            models.CheckConstraint(
                condition=Q(role__in=["admin", "expert", "validator"]), name="membership_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} of {self.project.slug}"


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

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "import batches"

    def __str__(self) -> str:
        return f"{self.source_name} ({self.row_count} rows)"


class Example(models.Model):
    """An original instance exactly as imported. It is never edited after import."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="examples")
    external_id = models.CharField(max_length=255)
    fields = models.JSONField()
    label = models.CharField(max_length=100)
    split = models.CharField(max_length=8, default="test")
    metadata = models.JSONField(default=dict, blank=True)
    batch = models.ForeignKey(
        ImportBatch, null=True, blank=True, on_delete=models.PROTECT, related_name="examples"
    )

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="example_external_id_unique"
            ),
            models.CheckConstraint(condition=Q(split__in=SPLITS), name="example_split_valid"),
            models.CheckConstraint(condition=~Q(external_id=""), name="example_id_not_empty"),
            models.CheckConstraint(condition=~Q(label=""), name="example_label_not_empty"),
        ]
        indexes = [models.Index(fields=["project", "split", "label"])]

    def __str__(self) -> str:
        return self.external_id


class AuditLog(models.Model):
    """Who did what, and when: imports, role changes, unqualifying, adjudications, releases."""

    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="audit_log"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    action = models.CharField(max_length=64)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor} {self.action}"


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
    fields = models.JSONField()
    label = models.CharField(max_length=100, blank=True)
    tags = models.ManyToManyField(Tag, blank=True, related_name="perturbations")
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
        ]

    def __str__(self) -> str:
        return f"perturbation {self.pk} of {self.pivot}"

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


class ValidationItem(models.Model):
    """A perturbation to validate, an original pivot mixed in as a control, or an item whose
    responses were imported from elsewhere (`external_id`).

    Validators see only the fields, so they cannot tell the kinds apart.
    """

    class Status(models.TextChoices):
        OPEN = "open"
        RESOLVED = "resolved"
        CLOSED = "closed"  # withdrawn before anyone voted

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="items")
    perturbation = models.OneToOneField(
        Perturbation, null=True, blank=True, on_delete=models.CASCADE, related_name="item"
    )
    control = models.OneToOneField(
        Example, null=True, blank=True, on_delete=models.CASCADE, related_name="control_item"
    )
    # The author, copied here so that the queue can skip a validator's own items cheaply.
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    external_id = models.CharField(max_length=255, blank=True)
    fields = models.JSONField()
    split = models.CharField(max_length=8, default="test")
    # The label the item is meant to have: the author's intended label, or the original's.
    # Empty for imported items, whose only truth is their votes.
    gold_label = models.CharField(max_length=100, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    counted_votes = models.PositiveIntegerField(default=0)
    majority_label = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(perturbation__isnull=False, control__isnull=True, external_id="")
                    | Q(perturbation__isnull=True, control__isnull=False, external_id="")
                    | (Q(perturbation__isnull=True, control__isnull=True) & ~Q(external_id=""))
                ),
                name="item_is_perturbation_control_or_external",
            ),
            models.CheckConstraint(condition=Q(split__in=SPLITS), name="item_split_valid"),
            models.UniqueConstraint(
                fields=["project", "external_id"],
                condition=~Q(external_id=""),
                name="item_external_id_unique",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["open", "resolved", "closed"]), name="item_status_valid"
            ),
        ]
        indexes = [
            models.Index(
                fields=["project", "status", "-counted_votes", "created_at"], name="item_queue"
            )
        ]

    def __str__(self) -> str:
        return f"item {self.pk}"

    @property
    def is_control(self) -> bool:
        return self.control_id is not None


class Lease(models.Model):
    """A validator's short reservation of an item, so that concurrent validators get different
    items."""

    item = models.ForeignKey(ValidationItem, on_delete=models.CASCADE, related_name="leases")
    validator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "validator"], name="lease_unique_per_item")
        ]
        indexes = [models.Index(fields=["validator", "expires_at"])]

    def __str__(self) -> str:
        return f"{self.validator} leases item {self.item_id} until {self.expires_at:%H:%M}"


class Vote(models.Model):
    class Flag(models.TextChoices):
        NOT_MINIMAL = "not_minimal"
        UNGRAMMATICAL = "ungrammatical"
        UNCLEAR = "unclear"

    item = models.ForeignKey(ValidationItem, on_delete=models.CASCADE, related_name="votes")
    validator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="votes"
    )
    label = models.CharField(max_length=100)
    flags = models.JSONField(default=list, blank=True)
    seconds_spent = models.PositiveIntegerField(default=0)
    guideline_version = models.PositiveIntegerField(default=0)
    # False while the validator is unqualified: the vote is kept but does not count.
    counts = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["item", "validator"], name="vote_once_per_item"),
            models.CheckConstraint(condition=~Q(label=""), name="vote_label_not_empty"),
        ]
        indexes = [models.Index(fields=["validator", "item"])]

    def __str__(self) -> str:
        return f"{self.validator} voted {self.label} on {self.item_id}"


class ValidatorStatus(models.Model):
    """Whether a validator's votes count in a project, and their agreement so far."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="validators")
    validator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    qualified = models.BooleanField(default=True)
    agreement = models.FloatField(null=True, blank=True)
    # Running counts of this validator's votes on resolved items, and of those that match the
    # majority: kept up to date on every resolution, so that quality checks cost no scan.
    resolved_votes = models.PositiveIntegerField(default=0)
    agreed_votes = models.PositiveIntegerField(default=0)
    changed_at = models.DateTimeField(default=timezone.now)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        verbose_name_plural = "validator statuses"
        constraints = [
            models.UniqueConstraint(fields=["project", "validator"], name="validator_status_unique")
        ]

    def __str__(self) -> str:
        state = "qualified" if self.qualified else "unqualified"
        return f"{self.validator} is {state} in project {self.project_id}"


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

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="entries")
    perturbation = models.ForeignKey(
        Perturbation, on_delete=models.PROTECT, related_name="release_entries"
    )
    set_id = models.CharField(max_length=255)
    split = models.CharField(max_length=8)
    label = models.CharField(max_length=100)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["release", "perturbation"], name="release_entry_unique"
            ),
            models.CheckConstraint(condition=Q(split__in=SPLITS), name="release_entry_split"),
        ]
        indexes = [models.Index(fields=["release", "set_id"])]

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
