"""The crowd gates' one write outside the vote (docs/validation.md, "Validation with a crowd"):
an admin gives a validator who failed the qualification test another attempt; and the
standing an admin's change leaves a validator in."""

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from annotation.crowd import gates
from annotation.crowd.gates import FAILED
from annotation.errors import DomainError
from annotation.models import AuditLog, Membership, Project, ValidatorStatus


def allow_retest(*, project: Project, validator_id: int, actor: Any) -> None:
    """An admin gives a validator who failed the test one more attempt: the next item served
    draws it, and failing it ends their work again (their earlier attempts stay recorded).
    404 for a user who is not a validator here; 409 for one who has not failed the test."""
    with transaction.atomic():
        status = (
            ValidatorStatus.objects.select_for_update()
            .filter(project=project, validator_id=validator_id, qualification=FAILED)
            .first()
        )
        if (
            status is None
            and not Membership.objects.filter(project=project, user_id=validator_id).exists()
        ):
            raise DomainError("No such validator in this project.", code="not_found")
        if status is None:
            raise DomainError("This validator has not failed the test.", code="conflict")
        status.qualification, status.quiz_items = "", []  # the next attempt is its last
        status.save(update_fields=["qualification", "quiz_items"])
        AuditLog.record(
            actor=actor, action="qualification_retest", project=project, validator=validator_id
        )


@dataclass(frozen=True)
class Standing:
    """A validator's standing as an admin's change leaves it: qualified for the counts, and
    their qualification test "pending", "passed" or "failed" (None without a test)."""

    qualified: bool
    qualification: str | None


def standing(*, project: Project, validator: Any) -> Standing:
    status = gates.status_of(project, validator)
    return Standing(status.qualified, gates.gate_figures(project, status)["qualification"])
