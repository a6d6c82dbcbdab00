"""Casting a vote (docs/validation.md): `check_*` functions decide whether it may be cast,
annotation.validation.sql writes it. The vote, and the resolution it may complete, commit under
the item's row lock; the voters' quality counts are a separate step after that commit, which
the vote registers with `transaction.on_commit`."""

import json
from collections import Counter
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from annotation.bulk import deadlock_as_conflict
from annotation.crowd import gates
from annotation.errors import DomainError
from annotation.models import (
    AuditLog,
    GoldAnswer,
    Perturbation,
    Project,
    ValidationItem,
    ValidatorStatus,
    Vote,
)
from annotation.models.config import clean_seconds_spent
from annotation.text.answers import AnswerRules
from annotation.validation import sql
from annotation.validation.resolution import item_resolve
from annotation.validation.services import quality
from annotation.validation.services.queue import lease_again

FLAGS = [choice for choice, _ in Vote.Flag.choices]
MAX_ANSWER_CHARS = 2000
VOTE_RACE = (
    "The project changed while your vote was being recorded (it is being deleted, or its items "
    "changed): nothing was recorded. Vote again."
)


@dataclass(frozen=True)
class VoteCast:
    """What a vote came to: the response recorded (or the earlier, same one it repeats, when
    `created` is False) on item `item_id`, a real item's or a gold item's."""

    item_id: int
    label: str
    answer: str
    flags: list[str]
    created: bool

    @classmethod
    def of(cls, record: Vote | GoldAnswer, *, item_id: int, created: bool) -> "VoteCast":
        flags = list(record.flags)
        return cls(item_id, record.label, record.answer, flags, created)


def vote_cast(*, project: Project, item_id: int, validator: Any, **response: Any) -> VoteCast:
    """Record a vote on an item of `project`; `response` is the label, answer, flags and
    seconds_spent, checked first (400, the same on any item, so that it tells no item apart),
    then the item (404 if it is not one, 403 on one's own). A repeat of the same vote is not
    an error, so clients may retry (docs/api.md): it comes back with `created` False.

    The vote and any resolution commit first, under the item's row lock; the voters' quality
    counts are then a step of their own, registered with `transaction.on_commit` (as Zulip's
    actions send their events), so that the item's lock is never held while waiting for other
    validators' counters. An id that is no real item may be a gold item's: its answer is
    recorded in the same transaction, in as many statements (annotation.crowd.gates)."""
    checked = check_response(project, **response)
    with transaction.atomic(), deadlock_as_conflict(VOTE_RACE):  # test_races.py
        item = sql.lock_item(project_id=project.pk, item_id=item_id)
        if item is None:  # a gold item, or none (404)
            return _gold_cast(project, item_id, validator, checked)
        return _real_cast(project, item, validator, checked)


def _gold_cast(
    project: Project, item_id: int, validator: Any, response: dict[str, Any]
) -> VoteCast:
    answered = gates.gold_answer(project=project, item_id=item_id, validator=validator, **response)
    if answered.paused is not None:
        transaction.on_commit(partial(_paused_by_gold, project, validator, answered.paused))
    return VoteCast.of(answered.record, item_id=item_id, created=answered.created)


def _real_cast(
    project: Project, item: ValidationItem, validator: Any, response: dict[str, Any]
) -> VoteCast:
    """Check and store the vote on the locked item, and resolve the item if it completes it
    (its voters' counts are taken once that is committed)."""
    now = timezone.now()
    vote = check_vote(project, item, validator, now=now, response=response)
    existing, others, vote.counts, gate, leased = sql.vote_state(
        project_id=project.pk, item_id=item.pk, validator_id=validator.pk, now=now
    )
    if existing is not None:
        return VoteCast.of(check_repeat(existing, vote), item_id=item.pk, created=False)
    gates.check_vote_gate(project, gate)
    check_room(project, item, leased=leased, others=others)
    if not leased:
        check_servable(project, item, validator)
    vote.pk = sql.insert_vote(vote, json.dumps(vote.flags))
    if vote.counts:
        item.counted_votes += 1
        item.label_votes[vote.label] = item.label_votes.get(vote.label, 0) + 1
        sql.store_counts(
            item_id=item.pk,
            counted_votes=item.counted_votes,
            label_votes_json=json.dumps(item.label_votes),
        )
        if item.counted_votes >= item.votes_needed(project):
            item_resolve(item=item)
            transaction.on_commit(partial(quality.resolution_recorded, item=item))
    return VoteCast.of(vote, item_id=item.pk, created=True)


def _paused_by_gold(project: Project, validator: Any, status: ValidatorStatus) -> None:
    """After the commit of the gold answer that paused them: their votes since their last
    passed gold item stop counting, and the pause is in the audit log."""
    votes = quality.votes_discounted(
        project=project, validator_id=validator.pk, after_vote=status.gold_mark
    )
    AuditLog.record(
        actor=None,
        action="validator_paused",
        project=project,
        validator=validator.pk,
        gold_seen=status.gold_seen,
        gold_accuracy=round(status.gold_correct / status.gold_seen, 4),
        votes_discounted=votes,
    )


def check_vote(
    project: Project,
    item: ValidationItem | None,
    validator: Any,
    *,
    now: Any,
    response: dict[str, Any],
) -> Vote:
    """The vote as it would be stored, if this validator may cast it on this (locked) item
    (404, 403); `response` as `check_response` returned it."""
    if item is None:
        raise DomainError("No such item in this project.", code="not_found")
    item.project = project
    if item.author_id == validator.pk:
        raise DomainError("You cannot validate your own perturbation.", code="forbidden")
    return Vote(
        item=item,
        validator=validator,
        **response,
        guideline_version=item.guideline_version or 0,  # type: ignore[attr-defined]
        created_at=now,
    )


def check_response(
    project: Project, *, label: str = "", answer: Any = "", flags: Any = (), seconds_spent: Any = 0
) -> dict[str, Any]:
    """A vote's response as stored (label, answer, flags, seconds_spent), on any item."""
    answer = _check_response(project, label, answer)
    flags = sorted(set(flags or []))
    unknown = [f for f in flags if f not in FLAGS]
    if unknown:
        raise DomainError(f"Unknown flag {unknown[0]!r}; flags are {', '.join(FLAGS)}.")
    seconds = clean_seconds_spent(seconds_spent)
    return {"label": label, "answer": answer, "flags": flags, "seconds_spent": seconds}


def check_repeat(existing_id: int, vote: Vote) -> Vote:
    """The stored vote, if `vote` repeats it; votes cannot change."""
    existing = Vote.objects.get(pk=existing_id)
    same = (existing.label, existing.answer) == (vote.label, vote.answer)
    if same and sorted(existing.flags) == vote.flags:
        return existing
    raise DomainError(
        "You already voted on this item with a different answer; votes cannot change.",
        code="conflict",
    )


def check_servable(project: Project, item: ValidationItem, validator: Any) -> None:
    """A vote without a live lease is taken only on an item the queue would serve this
    validator now: voting around the queue would skip the spacing of related items."""
    if not sql.unrelated_to_recent_votes(
        project_id=project.pk, validator_id=validator.pk, item_id=item.pk
    ):
        raise DomainError(
            "This item was not served to you; fetch the next item instead.", code="conflict"
        )


def check_room(project: Project, item: ValidationItem, *, leased: bool, others: int) -> None:
    """The item is open and, unless the voter held a live lease on it, has room beside the
    other validators' live leases."""
    if item.status != ValidationItem.Status.OPEN:
        raise DomainError("This item is no longer open for votes.", code="conflict")
    if not leased and item.counted_votes + others >= item.votes_needed(project):
        raise DomainError(
            "This item has all the votes it needs; fetch the next item instead.",
            code="conflict",
        )


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
    if not isinstance(answer, str) or not answer.strip():
        raise DomainError(
            "Type an answer (words or numbers), or choose an extra label.", field="answer"
        )
    rules = AnswerRules.of(project)
    if not rules.normalize(answer):
        raise DomainError(
            f"{answer.strip()!r} normalises to nothing under {rules.name}'s rules; type words "
            "or numbers, or choose an extra label.",
            field="answer",
        )
    if len(answer) > MAX_ANSWER_CHARS:
        raise DomainError(f"An answer holds at most {MAX_ANSWER_CHARS} characters.", field="answer")
    return answer.strip()


def vote_counts(perturbation: Perturbation) -> dict[str, int]:
    """Counted votes per label (or normalised answer) on a perturbation's item, most first."""
    rules = AnswerRules.of(perturbation.project)
    rows = (
        Vote.objects.filter(item__perturbation=perturbation, counts=True)
        .values_list("label", "answer")
        .annotate(n=Count("id"))
    )
    counts: Counter[str] = Counter()
    for label, answer, n in rows:
        counts[label or rules.normalize(answer)] += n
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def check_undo_allowed(project: Project) -> None:
    """Undo is off under the crowd gates (`gates.hides_left_and_undo` says why)."""
    if gates.hides_left_and_undo(project):
        raise DomainError(
            "Votes cannot be taken back in this project (it has a qualification test or gold "
            "checks).",
            code="conflict",
        )


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
        item.label_votes[vote.label] -= 1
        item.label_votes = {label: n for label, n in item.label_votes.items() if n}
        item.save(update_fields=["counted_votes", "label_votes"])
    lease_again(project=item.project, validator=validator, item=item)


def last_undoable(*, project: Project, validator: Any) -> ValidationItem | None:
    """The item of this validator's latest vote, if it is still open."""
    last = Vote.objects.filter(item__project=project, validator=validator).order_by("-id").first()
    if last is None or last.item.status != ValidationItem.Status.OPEN:
        return None
    return last.item
