"""Casting a vote (SPEC §3D). The vote, and the resolution it may complete, commit under the
item's row lock; the voters' quality counts are a separate step after that commit."""

from collections import Counter
from typing import Any

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from annotation.errors import DomainError
from annotation.models import Lease, Perturbation, Project, ValidationItem, ValidatorStatus, Vote
from annotation.projects.config import MAX_SECONDS_SPENT
from annotation.validation import quality
from annotation.validation.answers import normalize_answer
from annotation.validation.resolution import item_resolve

FLAGS = [choice for choice, _ in Vote.Flag.choices]
MAX_ANSWER_CHARS = 2000


def _validator_counts(project: Project, validator: Any) -> bool:
    return not ValidatorStatus.objects.filter(
        project=project, validator=validator, qualified=False
    ).exists()


def vote_cast(
    *,
    item: ValidationItem,
    validator: Any,
    label: str = "",
    answer: str = "",
    flags: Any = (),
    seconds_spent: Any = 0,
) -> tuple[Vote, bool]:
    """Record a vote; returns (vote, created). A repeat of the same vote is not an error.

    The vote and any resolution commit first, under the item's row lock; the voters' quality
    counts are then a step of their own, so that the item's lock is never held while waiting
    for other validators' counters."""
    vote, created, resolved = _vote_and_resolve(
        item=item,
        validator=validator,
        label=label,
        answer=answer,
        flags=flags,
        seconds_spent=seconds_spent,
    )
    if resolved is not None:
        quality.resolution_recorded(item=resolved)
    return vote, created


@transaction.atomic
def _vote_and_resolve(
    *,
    item: ValidationItem,
    validator: Any,
    label: str,
    answer: str,
    flags: Any = (),
    seconds_spent: Any = 0,
) -> tuple[Vote, bool, ValidationItem | None]:
    item = ValidationItem.objects.select_for_update().select_related("project").get(pk=item.pk)
    project = item.project
    if item.author_id == validator.pk:
        raise DomainError("You cannot validate your own perturbation.", code="forbidden")
    flags = sorted(set(flags or []))
    answer = _check_response(project, label, answer)
    existing = Vote.objects.filter(item=item, validator=validator).first()
    if existing is not None:
        same = (existing.label, existing.answer) == (label, answer)
        if same and sorted(existing.flags) == flags:
            return existing, False, None
        raise DomainError(
            "You already voted on this item with a different answer; votes cannot change.",
            code="conflict",
        )
    unknown = [f for f in flags if f not in FLAGS]
    if unknown:
        raise DomainError(f"Unknown flag {unknown[0]!r}; flags are {', '.join(FLAGS)}.")
    try:
        seconds = int(seconds_spent or 0)
    except (TypeError, ValueError):
        seconds = -1
    if not 0 <= seconds <= MAX_SECONDS_SPENT:
        raise DomainError(
            f"seconds_spent must be a whole number from 0 to {MAX_SECONDS_SPENT}.",
            field="seconds_spent",
        )
    if item.status != ValidationItem.Status.OPEN:
        raise DomainError("This item is no longer open for votes.", code="conflict")
    now = timezone.now()
    has_lease = Lease.objects.filter(item=item, validator=validator, expires_at__gt=now).exists()
    if not has_lease:
        others = Lease.objects.filter(item=item, expires_at__gt=now).count()
        if item.counted_votes + others >= item.votes_needed(project):
            raise DomainError(
                "This item has all the votes it needs; fetch the next item instead.",
                code="conflict",
            )
    counts = _validator_counts(project, validator)
    vote = Vote.objects.create(
        item=item,
        validator=validator,
        label=label,
        answer=answer,
        flags=flags,
        seconds_spent=seconds,
        guideline_version=project.current_guideline_version(),
        counts=counts,
    )
    Lease.objects.filter(item=item, validator=validator).delete()
    if counts:
        item.counted_votes += 1
        item.save(update_fields=["counted_votes"])
        if item.counted_votes >= item.votes_needed(project):
            item_resolve(item=item)
            return vote, True, item
    return vote, True, None


def _check_response(project: Project, label: str, answer: Any) -> str:
    """A label for label projects; an answer, or an extra label, for free-text ones. Returns
    the answer as stored."""
    if not project.is_free_text:
        if answer:
            raise DomainError("This project's items take a label, not an answer.", field="answer")
        if label not in project.all_labels:
            raise DomainError(
                f"Unknown label {label!r}; choose one of {', '.join(project.all_labels)}.",
                field="label",
            )
        return ""
    if label:
        if answer:
            raise DomainError("Give an answer or an extra label, not both.", field="answer")
        if label not in project.extra_labels:
            known = ", ".join(project.extra_labels) or "none"
            raise DomainError(
                f"Unknown label {label!r}; type an answer, or choose one of: {known}.",
                field="label",
            )
        return ""
    if not isinstance(answer, str) or not normalize_answer(answer):
        raise DomainError(
            "Type an answer (words or numbers), or choose an extra label.", field="answer"
        )
    if len(answer) > MAX_ANSWER_CHARS:
        raise DomainError(f"An answer holds at most {MAX_ANSWER_CHARS} characters.", field="answer")
    return answer.strip()


def vote_counts(perturbation: Perturbation) -> dict[str, int]:
    """Counted votes per label (or normalised answer) on a perturbation's item, most first."""
    rows = (
        Vote.objects.filter(item__perturbation=perturbation, counts=True)
        .values_list("label", "answer")
        .annotate(n=Count("id"))
    )
    counts: Counter[str] = Counter()
    for label, answer, n in rows:
        counts[label or normalize_answer(answer)] += n
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


@transaction.atomic
def vote_undo(*, item: ValidationItem, validator: Any) -> None:
    """Take back this validator's vote while its item is still open (unresolved): a resolved
    item's votes are part of its outcome and stay."""
    item = ValidationItem.objects.select_for_update().get(pk=item.pk)
    vote = Vote.objects.filter(item=item, validator=validator).first()
    if vote is None:
        raise DomainError("You have no vote on this item to take back.", code="conflict")
    if item.status != ValidationItem.Status.OPEN:
        raise DomainError("This item is resolved; its votes can no longer change.", code="conflict")
    vote.delete()
    if vote.counts:
        item.counted_votes -= 1
        item.save(update_fields=["counted_votes"])


def last_undoable(*, project: Project, validator: Any) -> ValidationItem | None:
    """The item of this validator's latest vote, if it is still open."""
    last = Vote.objects.filter(item__project=project, validator=validator).order_by("-id").first()
    if last is None or last.item.status != ValidationItem.Status.OPEN:
        return None
    return last.item
