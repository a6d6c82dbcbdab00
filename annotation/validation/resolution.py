"""Resolution of an item once its counted votes reach votes_per_item (SPEC §3D)."""

from collections import Counter

from django.utils import timezone

from annotation.models import Lease, Perturbation, ValidationItem


def majority_of(labels: list[str], majority: int) -> str:
    """The label chosen at least `majority` times, or "" if there is none."""
    if not labels:
        return ""
    label, n = Counter(labels).most_common(1)[0]
    return label if n >= majority else ""


def item_resolve(*, item: ValidationItem) -> None:
    """Resolve an item whose counted votes reached votes_per_item (SPEC §3D)."""
    project = item.project
    labels = list(item.votes.filter(counts=True).values_list("label", flat=True))
    item.majority_label = majority_of(labels, project.setting("majority"))
    item.status = ValidationItem.Status.RESOLVED
    item.resolved_at = timezone.now()
    item.save(update_fields=["majority_label", "status", "resolved_at"])
    Lease.objects.filter(item=item).delete()
    if item.perturbation_id is not None:
        perturbation = Perturbation.objects.select_for_update().get(pk=item.perturbation_id)
        perturbation.status = resolution_status(
            item.majority_label, perturbation.label, project.labels
        )
        perturbation.majority_label = item.majority_label
        perturbation.resolved_at = item.resolved_at
        perturbation.save(update_fields=["status", "majority_label", "resolved_at"])


def resolution_status(majority: str, intended: str, task_labels: list[str]) -> str:
    if majority == intended:
        return Perturbation.Status.ACCEPTED
    if majority in task_labels:
        return Perturbation.Status.DISPUTED
    return Perturbation.Status.NO_MAJORITY
