"""Casting a vote (SPEC §3D). The vote, and the resolution it may complete, commit under the
item's row lock; the voters' quality counts are a separate step after that commit."""

import json
from collections import Counter
from typing import Any

from django.db import connection, transaction
from django.db.models import Count
from django.utils import timezone

from annotation.errors import DomainError
from annotation.models import Perturbation, Project, ValidationItem, Vote
from annotation.prepared import Statement, fetch
from annotation.projects.config import MAX_SECONDS_SPENT
from annotation.validation import quality
from annotation.validation.answers import normalize_answer
from annotation.validation.resolution import item_resolve

FLAGS = [choice for choice, _ in Vote.Flag.choices]
MAX_ANSWER_CHARS = 2000


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
    return vote_cast_by_id(
        project=item.project,
        item_id=item.pk,
        validator=validator,
        label=label,
        answer=answer,
        flags=flags,
        seconds_spent=seconds_spent,
    )


def vote_cast_by_id(*, project: Project, item_id: int, **vote: Any) -> tuple[Vote, bool]:
    """vote_cast for an item known by its id, which must belong to `project` (404 if not)."""
    cast, created, resolved = _vote_and_resolve(project=project, item_id=item_id, **vote)
    if resolved is not None:
        quality.resolution_recorded(item=resolved)
    return cast, created


# The item, locked, with the project's guideline version. Hand-written and prepared, as are the
# statements below: a vote runs them all, and building them through the ORM cost more CPU than
# running them (and planning them more than running them).
_LOCK = Statement(
    "vote_lock",
    """SELECT i.*, (SELECT max(g.version) FROM annotation_guidelines g
                    WHERE g.project_id = i.project_id) AS guideline_version
       FROM annotation_validationitem i WHERE i.id = %(item)s AND i.project_id = %(project)s""",
    lock="FOR UPDATE",
    item="bigint",
    project="bigint",
)
# What this validator already has on the item, and the other validators' live leases: read in a
# fresh statement once the lock is held, so that it sees what committed before.
_STATE = Statement(
    "vote_state",
    """SELECT (SELECT v.id FROM annotation_vote v
               WHERE v.item_id = %(item)s AND v.validator_id = %(validator)s),
              (SELECT count(*) FROM annotation_lease l WHERE l.item_id = %(item)s
               AND l.validator_id <> %(validator)s AND l.expires_at > %(now)s),
              NOT EXISTS (SELECT 1 FROM annotation_validatorstatus s
                          WHERE s.project_id = %(project)s AND s.validator_id = %(validator)s
                          AND NOT s.qualified)""",
    item="bigint",
    validator="integer",
    now="timestamptz",
    project="bigint",
)
# The lease goes with the vote; whether a live one was there decides the room check.
_UNLEASE = Statement(
    "vote_unlease",
    "DELETE FROM annotation_lease WHERE item_id = %(item)s AND validator_id = %(validator)s"
    " RETURNING expires_at > %(now)s",
    item="bigint",
    validator="integer",
    now="timestamptz",
)
_INSERT = Statement(
    "vote_insert",
    """INSERT INTO annotation_vote (item_id, validator_id, label, answer, flags, seconds_spent,
                                    guideline_version, counts, created_at)
       VALUES (%(item)s, %(validator)s, %(label)s, %(answer)s, %(flags)s, %(seconds)s,
               %(guideline)s, %(counts)s, %(now)s)
       RETURNING id""",
    item="bigint",
    validator="integer",
    label="text",
    answer="text",
    flags="jsonb",
    seconds="integer",
    guideline="integer",
    counts="boolean",
    now="timestamptz",
)
_COUNT = Statement(
    "vote_count",
    "UPDATE annotation_validationitem SET counted_votes = %(n)s, label_votes = %(labels)s"
    " WHERE id = %(item)s",
    n="integer",
    labels="jsonb",
    item="bigint",
)


@transaction.atomic
def _vote_and_resolve(
    *,
    project: Project,
    item_id: int,
    validator: Any,
    label: str = "",
    answer: str = "",
    flags: Any = (),
    seconds_spent: Any = 0,
) -> tuple[Vote, bool, ValidationItem | None]:
    now = timezone.now()
    params: dict[str, Any] = {
        "item": item_id,
        "project": project.pk,
        "validator": validator.pk,
        "now": connection.ops.adapt_datetimefield_value(now),
    }
    item = next(iter(fetch(ValidationItem, *_LOCK.bind(params))), None)
    if item is None:
        raise DomainError("No such item in this project.", code="not_found")
    item.project = project
    if item.author_id == validator.pk:
        raise DomainError("You cannot validate your own perturbation.", code="forbidden")
    flags = sorted(set(flags or []))
    answer = _check_response(project, label, answer)
    with connection.cursor() as cursor:
        cursor.execute(*_STATE.bind(params))
        existing_id, others, counts = cursor.fetchone()
        if existing_id is not None:
            existing = Vote.objects.get(pk=existing_id)
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
        seconds = _seconds(seconds_spent)
        if item.status != ValidationItem.Status.OPEN:
            raise DomainError("This item is no longer open for votes.", code="conflict")
        # The lease goes with the vote; whether a live one was there decides the room check.
        cursor.execute(*_UNLEASE.bind(params))
        leased = cursor.fetchone()
        if not (leased and leased[0]) and item.counted_votes + others >= item.votes_needed(project):
            raise DomainError(
                "This item has all the votes it needs; fetch the next item instead.",
                code="conflict",
            )
        vote = Vote(
            item=item,
            validator=validator,
            label=label,
            answer=answer,
            flags=flags,
            seconds_spent=seconds,
            guideline_version=item.guideline_version or 0,  # type: ignore[attr-defined]
            counts=bool(counts),
            created_at=now,
        )
        inserted = {
            **params,
            "label": label,
            "answer": answer,
            "flags": json.dumps(flags),
            "seconds": seconds,
            "guideline": vote.guideline_version,
            "counts": vote.counts,
        }
        cursor.execute(*_INSERT.bind(inserted))
        vote.pk = cursor.fetchone()[0]
        if not vote.counts:
            return vote, True, None
        item.counted_votes += 1
        item.label_votes[label] = item.label_votes.get(label, 0) + 1
        counted = {"n": item.counted_votes, "labels": json.dumps(item.label_votes), "item": item_id}
        cursor.execute(*_COUNT.bind(counted))
    if item.counted_votes >= item.votes_needed(project):
        item_resolve(item=item)
        return vote, True, item
    return vote, True, None


def _seconds(seconds_spent: Any) -> int:
    try:
        seconds = int(seconds_spent or 0)
    except (TypeError, ValueError):
        seconds = -1
    if not 0 <= seconds <= MAX_SECONDS_SPENT:
        raise DomainError(
            f"seconds_spent must be a whole number from 0 to {MAX_SECONDS_SPENT}.",
            field="seconds_spent",
        )
    return seconds


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
        item.label_votes[vote.label] -= 1
        item.label_votes = {label: n for label, n in item.label_votes.items() if n}
        item.save(update_fields=["counted_votes", "label_votes"])


def last_undoable(*, project: Project, validator: Any) -> ValidationItem | None:
    """The item of this validator's latest vote, if it is still open."""
    last = Vote.objects.filter(item__project=project, validator=validator).order_by("-id").first()
    if last is None or last.item.status != ValidationItem.Status.OPEN:
        return None
    return last.item
