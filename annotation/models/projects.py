"""Projects, their label schema and taxonomy, guidelines, roles and the audit log."""

from html import unescape
from typing import Any

import nh3
from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils import timezone

from annotation.errors import DomainError
from annotation.models.config import DEFAULT_SETTINGS
from annotation.prompting import default_prompt


def plain_text(value: str, kind: str) -> str:
    """A field's value as plain text: an `html` field without its tags, others as they are."""
    return unescape(nh3.clean(value, tags=set())) if kind == "html" else value


class Project(models.Model):
    class TaskType(models.TextChoices):
        CLASSIFICATION = "classification", "Classification"
        MINIMAL_PAIR = "minimal_pair", "Minimal pairs"
        FREE_TEXT = "free_text", "Free-text QA"

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
        # Granted in the Django admin; staff may always create projects.
        permissions = [("can_create_projects", "Can create projects")]
        constraints = [
            models.CheckConstraint(
                condition=Q(task_type__in=["classification", "minimal_pair", "free_text"]),
                name="project_task_type_valid",
            ),
            models.CheckConstraint(condition=~Q(slug=""), name="project_slug_not_empty"),
            # Two projects named alike read as one in every list (issue 59): names are unique
            # whatever their case; the services say so first, with a clearer message.
            models.UniqueConstraint(
                Lower("name"),
                name="project_name_unique_ci",
                violation_error_message="a project with this name exists (whatever its case).",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @classmethod
    def check_name_free(cls, name: str, *, other_than: "Project | None" = None) -> None:
        """Refuse `name` when another project has it, whatever its case."""
        taken = cls.objects.filter(name__iexact=name)
        if other_than is not None:
            taken = taken.exclude(pk=other_than.pk)
        first = taken.first()
        if first is not None:
            raise DomainError(
                f"a project named {first.name!r} exists: project names are unique, whatever "
                "their case; choose another name.",
                field="name",
            )

    def setting(self, key: str) -> Any:
        return self.settings.get(key, DEFAULT_SETTINGS[key])

    def min_agreement_for(self, split: str) -> int:
        value = self.setting("release_min_agreement")
        if isinstance(value, dict):
            return int(value.get(split, DEFAULT_SETTINGS["release_min_agreement"]))
        return int(value)

    @property
    def prompt(self) -> str:
        """What a language model reads each example through (docs/prompting.md)."""
        return str(self.setting("prompt")) or default_prompt(self.task_type, self.field_names)

    @property
    def field_names(self) -> list[str]:
        return [f["name"] for f in self.fields]

    def shown_fields(self, values: dict[str, Any]) -> list[tuple[str, str, str]]:
        """(name, value, kind) of each field, in display order, for the pages."""
        return [(f["name"], values.get(f["name"], ""), f.get("kind", "text")) for f in self.fields]

    @property
    def optional_field_names(self) -> set[str]:
        """Fields a row may leave out or empty: a minimal pair's `source` (docs/task-types.md)."""
        return {"source"} if self.task_type == self.TaskType.MINIMAL_PAIR else set()

    @property
    def editable_field_names(self) -> list[str]:
        return [f["name"] for f in self.fields if f["editable"]]

    def editable_text(self, fields: dict[str, str]) -> str:
        """The editable fields of an example or a perturbation as one text: what an edit
        changes, for diffs and for the analyses of edits. An `html` field counts as its text,
        without its tags."""
        kinds = {f["name"]: f.get("kind", "text") for f in self.fields}
        return " ".join(plain_text(fields[name], kinds[name]) for name in self.editable_field_names)

    @property
    def is_free_text(self) -> bool:
        return self.task_type == self.TaskType.FREE_TEXT

    @property
    def all_labels(self) -> list[str]:
        return [*self.labels, *self.extra_labels]

    def current_guidelines(self) -> "Guidelines | None":
        return self.guidelines.order_by("-version").first()

    def current_guideline_version(self) -> int:
        latest = self.current_guidelines()
        return latest.version if latest else 0


def user_or_none(user: Any) -> Any:
    """The user to record as an author or creator; None for anonymous callers (the CLI)."""
    return user if getattr(user, "is_authenticated", False) else None


class Tag(models.Model):
    """One phenomenon of the project's taxonomy (e.g. negation, tense)."""

    # On the editor, outside the text boxes, a key toggles each of the first 26 tags (in their
    # order); any tag is found by typing in the tag filter ("/"), where Enter toggles the first.
    KEYS = "abcdefghijklmnopqrstuvwxyz"

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


class Invitation(models.Model):
    """A link that gives one e-mail address roles in one project, once.

    Only a digest of the link's token is stored. The link can set a password only for the
    account that this invitation itself created (`account`), while that account has never
    signed in; any other account accepts by signing in as itself."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    email = models.CharField(max_length=254)  # lower case
    roles = models.JSONField()
    digest = models.CharField(max_length=64, unique=True)
    account = models.ForeignKey(  # the new account this invitation created, if it did
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"invitation of {self.email} to {self.project.slug}"

    @property
    def pending(self) -> bool:
        return not self.used_at and not self.revoked_at and self.expires_at > timezone.now()

    def may_set_password(self) -> bool:
        """Whether the link may choose the account's password: only for the account this
        invitation created, before anyone has signed in to it."""
        account = self.account
        return (
            account is not None and account.last_login is None and not account.has_usable_password()
        )


class AccountOrigin(models.Model):
    """An account that a project's admin (not staff) created on the Members page, and who made
    it. Its set-password link and its address were that admin's to use, so it may be theirs:
    it joins no other project, by its username or its address, and the admin who tries is told
    who made it. Staff vouch for its owner by deleting this row (the Django admin's Account
    origins); docs/security.md, "Accounts and invitations"."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="origin"
    )
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    project_slug = models.CharField(max_length=64)  # kept once the project is deleted
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_by_name = models.CharField(max_length=150)  # kept once that account is deleted
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.user} made by {self.created_by_name} in {self.project_slug}"

    def keeps_out_of(self, project: Project) -> bool:
        """Whether the account stays out of `project`: any project but the one it was made in
        (a deleted one's too)."""
        return self.project_id is None or self.project_id != project.pk

    def refusal(self, named: str) -> str:
        return (
            f"{named} is an account that {self.created_by_name}, an admin of project "
            f"{self.project_slug}, created: it joins no other project until staff confirm whose "
            "it is (docs/security.md)."
        )


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

    @classmethod
    def record(
        cls, *, actor: Any, action: str, project: Project | None = None, **details: Any
    ) -> "AuditLog":
        """Write one entry; `actor` may be anonymous or None (a worker, a command)."""
        return cls.objects.create(
            project=project, actor=user_or_none(actor), action=action, details=details
        )
