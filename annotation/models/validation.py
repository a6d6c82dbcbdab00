"""Blind validation: items, leases, votes and each validator's standing."""

import random

from django.conf import settings
from django.db import models
from django.db.models import JSONField, Q, Value
from django.utils import timezone

from annotation.models.config import SPLITS
from annotation.models.examples import Example
from annotation.models.perturbations import Perturbation
from annotation.models.projects import Project

_random = random.SystemRandom()


def public_item_id() -> int:
    """A random id for an item that validators see: consecutive ids told them which control was
    the original of the perturbation just before it (docs/security.md). Drawn above the ids the
    table's sequence hands out (bulk imports) and below 2^53, which JavaScript holds exactly."""
    return _random.randrange(2**32, 2**53)


class ValidationItem(models.Model):
    """A perturbation to validate, an original pivot mixed in as a control, or an item whose
    responses were imported from elsewhere (`external_id`).

    Validators see only the fields, so they cannot tell the kinds apart.
    """

    class Status(models.TextChoices):
        OPEN = "open"
        RESOLVED = "resolved"
        CLOSED = "closed"  # withdrawn before anyone voted

    # Indexed by item_queue, which leads with the project: a vote rewrites every index of its
    # item (counted_votes is in item_queue), so none is kept twice.
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="items", db_index=False
    )
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
    # Free-text projects: the answers the item is meant to have, and those the validators
    # agreed on once resolved (docs/task-types.md).
    gold_answers = models.JSONField(default=list, blank=True)
    majority_answers = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    counted_votes = models.PositiveIntegerField(default=0)
    # The counted votes per label ({label: n}; a free-text answer counts under ""), kept with
    # counted_votes under the item's row lock: the statistics read these, not every vote.
    label_votes = models.JSONField(default=dict, blank=True)
    # Votes an admin asked for beyond votes_per_item, after a resolution with no majority
    extra_votes = models.PositiveSmallIntegerField(default=0)
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
        # The queue's order in full, id last, so that choosing the next item reads candidates
        # in order and stops at the first that qualifies (without id, PostgreSQL sorted at
        # least 32 qualifying candidates to return one).
        indexes = [
            models.Index(
                fields=["project", "status", "-counted_votes", "created_at", "id"],
                name="item_queue",
            )
        ]

    def __str__(self) -> str:
        return f"item {self.pk}"

    def votes_needed(self, project: Project) -> int:
        """Counted votes that resolve the item: votes_per_item, plus any extra asked for."""
        return int(project.setting("votes_per_item")) + self.extra_votes

    def majority_needed(self, project: Project) -> int:
        """Votes one response needs to win: the project's majority, plus one for every two
        extra votes (3 of 5 becomes 4 of 7)."""
        return int(project.setting("majority")) + (self.extra_votes + 1) // 2

    @property
    def is_control(self) -> bool:
        return self.control_id is not None


class Lease(models.Model):
    """A validator's short reservation of an item, so that concurrent validators get different
    items."""

    # Each vote writes and deletes a lease: the item's and the validator's lookups use the
    # unique constraint and the (validator, expires_at) index, not indexes of their own.
    item = models.ForeignKey(
        ValidationItem, on_delete=models.CASCADE, related_name="leases", db_index=False
    )
    validator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, db_index=False
    )
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
        NOT_MINIMAL = "not_minimal", "not minimal"
        UNGRAMMATICAL = "ungrammatical"
        UNCLEAR = "unclear"

    # The key that toggles each flag on the validation page.
    FLAG_KEYS = {Flag.NOT_MINIMAL: "m", Flag.UNGRAMMATICAL: "g", Flag.UNCLEAR: "u"}

    # No index of their own: vote_once_per_item leads with the item, and vote_validator_latest
    # with the validator. Every vote pays for each index it writes.
    item = models.ForeignKey(
        ValidationItem, on_delete=models.CASCADE, related_name="votes", db_index=False
    )
    validator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="votes", db_index=False
    )
    # A label, or in free-text projects an answer (with label "") or an extra label.
    label = models.CharField(max_length=100, blank=True)
    answer = models.TextField(blank=True)
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
            models.CheckConstraint(
                condition=Q(label="") ^ Q(answer=""), name="vote_label_xor_answer"
            ),
        ]
        # A validator's latest votes first: the queue reads their last few on every next item.
        indexes = [models.Index(fields=["validator", "-id"], name="vote_validator_latest")]

    def __str__(self) -> str:
        return f"{self.validator} voted {self.label} on {self.item_id}"


class VoteSeconds(models.Model):
    """How many votes a validator cast in a project for each number of seconds spent. Database
    triggers (migration 0020) keep it on every insert, delete and move of votes, whichever path
    writes them, so that the statistics read a few hundred rows where they read every vote."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    validator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    seconds = models.PositiveIntegerField()
    votes = models.PositiveIntegerField()  # 0 once every such vote is deleted

    class Meta:
        verbose_name_plural = "vote seconds"
        constraints = [
            models.UniqueConstraint(
                fields=["project", "validator", "seconds"], name="vote_seconds_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.validator}: {self.votes} votes of {self.seconds} s in {self.project_id}"


class ValidatorStatus(models.Model):
    """Whether a validator's votes count in a project, and their agreement so far: the only
    record of it (annotation.validation.services.quality keeps it)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="validators")
    validator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    qualified = models.BooleanField(default=True)
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
    # Crowd gates (annotation.crowd.gates): the qualification test ("" not taken, "passed",
    # "failed"), the current attempt and its items; answers on gold items while working, the
    # gold item served and not answered yet, the validator's latest vote when they last passed
    # a gold item, and whether a failing gold accuracy paused them.
    # Database defaults: the hot path's statements create status rows without naming these.
    qualification = models.CharField(max_length=8, blank=True, default="", db_default="")
    quiz_attempt = models.PositiveSmallIntegerField(default=0, db_default=0)
    quiz_items = models.JSONField(default=list, blank=True, db_default=Value([], JSONField()))
    gold_seen = models.PositiveIntegerField(default=0, db_default=0)
    gold_correct = models.PositiveIntegerField(default=0, db_default=0)
    gold_pending = models.BigIntegerField(null=True, blank=True)
    gold_mark = models.BigIntegerField(default=0, db_default=0)
    paused = models.BooleanField(default=False, db_default=False)
    paused_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "validator statuses"
        constraints = [
            models.UniqueConstraint(
                fields=["project", "validator"], name="validator_status_unique"
            ),
            models.CheckConstraint(
                condition=Q(qualification__in=["", "passed", "failed"]),
                name="validator_qualification_valid",
            ),
        ]

    def __str__(self) -> str:
        state = "qualified" if self.qualified else "unqualified"
        return f"{self.validator} is {state} in project {self.project_id}"
