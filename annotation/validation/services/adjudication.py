"""Adjudication by an admin of what the validators left open: disputed and no-majority
perturbations (docs/validation.md)."""

from typing import Any

from django.db import transaction

from annotation.errors import DomainError
from annotation.models import AuditLog, Perturbation, ValidationItem
from annotation.validation.services.quality import item_reopen
from annotation.webhooks import events

EXTRA_VOTES = 2  # asked for when a no-majority item is reopened: 3 of 5 becomes 4 of 7

DECISIONS: dict[str, tuple[str, ...]] = {
    Perturbation.Status.DISPUTED: ("accept", "reject"),
    Perturbation.Status.NO_MAJORITY: ("reopen", "reject"),
}


@transaction.atomic
def perturbation_adjudicate(
    *, perturbation: Perturbation, admin: Any, decision: str
) -> Perturbation:
    """Decide a perturbation the validators left open (docs/validation.md): accept a disputed one
    under its majority label, reopen a no-majority one for EXTRA_VOTES more votes, or reject
    either."""
    # Item before perturbation, the order in which votes and qualification changes lock them
    items = ValidationItem.objects.select_for_update().filter(perturbation_id=perturbation.pk)
    list(items.values_list("pk"))
    perturbation = Perturbation.objects.select_for_update().get(pk=perturbation.pk)
    allowed = DECISIONS.get(perturbation.status)
    if allowed is None:
        raise DomainError(
            "Only disputed and no-majority perturbations can be adjudicated; "
            f"this one is {perturbation.status}.",
            code="conflict",
        )
    if decision not in allowed:
        raise DomainError(
            f"A {perturbation.get_status_display().lower()} perturbation can be "
            f"{' or '.join(allowed)}ed; decision must be {' or '.join(allowed)}.",
            field="decision",
        )
    if decision == "reopen":
        item_reopen(item=perturbation.item, extra_votes=EXTRA_VOTES)
        perturbation.refresh_from_db()
    else:
        perturbation.status = (
            Perturbation.Status.ACCEPTED if decision == "accept" else Perturbation.Status.REJECTED
        )
        perturbation.save(update_fields=["status"])
    AuditLog.record(
        actor=admin,
        action="adjudicated",
        project=perturbation.project,
        perturbation=perturbation.pk,
        decision=decision,
        intended_label=perturbation.label,
        majority_label=perturbation.majority_label,
    )
    decided = perturbation
    transaction.on_commit(lambda: events.perturbation_decided(decided, decision), robust=True)
    return perturbation
