"""Resolution of an item once its counted votes reach votes_per_item (SPEC §3D)."""

from collections import Counter

from django.utils import timezone

from annotation.models import Lease, Perturbation, ValidationItem, Vote
from annotation.validation import answers


def majority_of(labels: list[str], majority: int) -> str:
    """The label chosen at least `majority` times, or "" if there is none."""
    if not labels:
        return ""
    label, n = Counter(labels).most_common(1)[0]
    return label if n >= majority else ""


def item_resolve(*, item: ValidationItem) -> None:
    """Resolve an item whose counted votes reached votes_needed (SPEC §3D)."""
    project = item.project
    votes = item.votes.filter(counts=True)
    if project.is_free_text:
        outcome = answers.resolve(
            [answers.Response(a, label) for a, label in votes.values_list("answer", "label")],
            item.gold_answers,
            item.majority_needed(project),
            project.setting("answer_match_f1"),
        )
        item.majority_label, item.majority_answers = outcome.label, outcome.answers
        status = outcome.status
    else:
        labels = list(votes.values_list("label", flat=True))
        item.majority_label = majority_of(labels, item.majority_needed(project))
        status = resolution_status(item.majority_label, item.gold_label, project.labels)
    item.status = ValidationItem.Status.RESOLVED
    item.resolved_at = timezone.now()
    item.save(update_fields=["majority_label", "majority_answers", "status", "resolved_at"])
    Lease.objects.filter(item=item).delete()
    if item.perturbation_id is not None:  # one UPDATE, which locks the row (after the item's)
        Perturbation.objects.filter(pk=item.perturbation_id).update(
            status=status,
            majority_label=item.majority_label,
            majority_answers=item.majority_answers,
            resolved_at=item.resolved_at,
        )


def vote_agrees(vote: Vote, item: ValidationItem) -> bool:
    """Whether a vote on a resolved item agrees with its outcome (validator agreement)."""
    if not item.project.is_free_text:
        return vote.label == item.majority_label
    response = answers.Response(vote.answer, vote.label)
    threshold = item.project.setting("answer_match_f1")
    return response.matches(item.majority_answers, item.majority_label, threshold)


def resolution_status(majority: str, intended: str, task_labels: list[str]) -> str:
    if majority == intended:
        return Perturbation.Status.ACCEPTED
    if majority in task_labels:
        return Perturbation.Status.DISPUTED
    return Perturbation.Status.NO_MAJORITY
