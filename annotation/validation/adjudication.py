"""Adjudication of disputed perturbations by an admin (SPEC §3D)."""

from typing import Any

from django.db import transaction

from annotation.audit import audit
from annotation.errors import DomainError
from annotation.models import Perturbation


@transaction.atomic
def perturbation_adjudicate(
    *, perturbation: Perturbation, admin: Any, decision: str
) -> Perturbation:
    """Accept a disputed perturbation under its majority label, or reject it."""
    perturbation = Perturbation.objects.select_for_update().get(pk=perturbation.pk)
    if perturbation.status != Perturbation.Status.DISPUTED:
        raise DomainError(
            f"Only disputed perturbations can be adjudicated; this one is {perturbation.status}.",
            code="conflict",
        )
    if decision not in ("accept", "reject"):
        raise DomainError("decision must be accept or reject.")
    perturbation.status = (
        Perturbation.Status.ACCEPTED if decision == "accept" else Perturbation.Status.REJECTED
    )
    perturbation.save(update_fields=["status"])
    audit(
        actor=admin,
        action="adjudicated",
        project=perturbation.project,
        perturbation=perturbation.pk,
        decision=decision,
        intended_label=perturbation.label,
        majority_label=perturbation.majority_label,
    )
    return perturbation
