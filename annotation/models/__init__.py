"""The data model, one module per aggregate. Django finds every model through this package."""

from annotation.models.examples import SET_OF_ONE, Example, ImportBatch, ImportJob
from annotation.models.jobs import Job
from annotation.models.perturbations import Claim, Perturbation, PerturbationRevision, release_id
from annotation.models.projects import (
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

__all__ = [
    "SET_OF_ONE",
    "AuditLog",
    "Claim",
    "Example",
    "Guidelines",
    "ImportBatch",
    "ImportJob",
    "Invitation",
    "Job",
    "Lease",
    "Membership",
    "Perturbation",
    "PerturbationRevision",
    "Project",
    "Pseudonym",
    "Release",
    "ReleaseEntry",
    "Tag",
    "ValidationItem",
    "ValidatorStatus",
    "Vote",
    "VoteSeconds",
    "release_id",
    "user_or_none",
]
