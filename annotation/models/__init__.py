"""The data model, one module per aggregate. Django finds every model through this package."""

from annotation.models.comments import Comment
from annotation.models.crowd import GoldAnswer, GoldItem, Participant, Study
from annotation.models.examples import SET_OF_ONE, Example, ImportBatch, ImportJob
from annotation.models.jobs import Job
from annotation.models.notifications import Notification, NotificationPreference
from annotation.models.perturbations import Claim, Perturbation, PerturbationRevision, release_id
from annotation.models.projects import (
    AccountOrigin,
    AuditLog,
    Guidelines,
    Invitation,
    Membership,
    Project,
    Tag,
    user_or_none,
)
from annotation.models.releases import Pseudonym, Release, ReleaseEntry
from annotation.models.validation import Lease, ValidationItem, ValidatorStatus, Vote, VoteSeconds
from annotation.models.webhooks import Webhook, WebhookAttempt, WebhookDelivery

__all__ = [
    "SET_OF_ONE",
    "AccountOrigin",
    "AuditLog",
    "Claim",
    "Comment",
    "Example",
    "GoldAnswer",
    "GoldItem",
    "Guidelines",
    "ImportBatch",
    "ImportJob",
    "Invitation",
    "Job",
    "Lease",
    "Membership",
    "Notification",
    "NotificationPreference",
    "Participant",
    "Perturbation",
    "PerturbationRevision",
    "Project",
    "Pseudonym",
    "Release",
    "ReleaseEntry",
    "Study",
    "Tag",
    "ValidationItem",
    "ValidatorStatus",
    "Vote",
    "VoteSeconds",
    "Webhook",
    "WebhookAttempt",
    "WebhookDelivery",
    "release_id",
    "user_or_none",
]
