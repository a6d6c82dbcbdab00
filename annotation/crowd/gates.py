"""The crowd gates (docs/validation.md, "Validation with a crowd"): the qualification test a
new validator answers first, and the gold checks mixed in while they work.

Both serve gold items through the queue, like any item: the page and the API cannot tell them
apart, and serving one reads the queue's best candidate as serving a real item does. The gates
cost nothing while a project has neither; with them, one read of the validator's status per
item served, and on the vote path nothing beyond the status the vote already reads
(`sql.vote_state`)."""

import random
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.crowd import pool
from annotation.errors import DomainError
from annotation.models import (
    AuditLog,
    GoldAnswer,
    GoldItem,
    Membership,
    Project,
    ValidatorStatus,
    Vote,
)
from annotation.validation import quality, sql
from annotation.validation.answers import AnswerRules, Response

_random = random.Random()
PASSED, FAILED, PAUSED = "passed", "failed", "paused"
ENDED = {
    FAILED: "You did not pass this project's qualification test, so your work on it has ended. "
    "Thank you for your time.",
    PAUSED: "Your work on this project is paused: too many of your recent answers disagreed "
    "with items whose answer is known. An admin of the project may resume it.",
}


def quiz_on(project: Project) -> bool:
    return bool(
        project.setting("qualification_items") or project.setting("qualification_questions")
    )


def gates_on(project: Project) -> bool:
    return quiz_on(project) or project.setting("gold_rate") > 0


def exempt(project: Project) -> bool:
    """The project's admins (staff included) take no test: read from the roles `project_for`
    found, so that it costs no query."""
    return Membership.Role.ADMIN in getattr(project, "user_roles", ())


def check_vote_gate(project: Project, gate: str) -> None:
    """Refuse a vote on a real item from a validator the gates stopped, or one who has not
    passed the test yet (`gate` as `sql.vote_state` reads it)."""
    if gate in ENDED:
        raise DomainError(ENDED[gate], code="forbidden")
    if gate != PASSED and quiz_on(project) and not exempt(project):
        raise DomainError(
            "Answer the items you are served first; fetch the next item.", code="conflict"
        )


def status_of(project: Project, validator: Any, *, lock: bool = False) -> ValidatorStatus:
    rows = ValidatorStatus.objects.select_for_update() if lock else ValidatorStatus.objects
    status = rows.filter(project=project, validator=validator).first()
    if status is None:
        status, _ = ValidatorStatus.objects.get_or_create(project=project, validator=validator)
        if lock:
            status = ValidatorStatus.objects.select_for_update().get(pk=status.pk)
    return status


def ended(project: Project, validator: Any) -> str:
    """ "failed" or "paused" when the gates ended this validator's work; "" otherwise."""
    stopped = ValidatorStatus.objects.filter(project=project, validator=validator).filter(
        Q(paused=True) | Q(qualification=FAILED)
    )
    paused = stopped.values_list("paused", flat=True).first()
    return "" if paused is None else PAUSED if paused else FAILED


def gate_figures(project: Project, status: ValidatorStatus) -> dict[str, Any]:
    """A validator's standing at the gates, as the Validators page and the API show it:
    qualification "pending", "passed" or "failed" (null in a project without a test), gold
    items answered while working, the share right (null before the first), and the pause."""
    qualification = status.qualification or ("pending" if quiz_on(project) else None)
    seen = status.gold_seen
    return {
        "qualification": qualification,
        "gold_seen": seen,
        "gold_accuracy": round(status.gold_correct / seen, 4) if seen else None,
        "paused": status.paused,
    }


def pool_for_gates(project: Project) -> int | None:
    """With a gate on, the gold pool filled from the labelled originals and accepted items not
    in it yet: when the project's settings are saved (the Settings page, the Studies page's
    questions, the API) and when a study is made. The pool's size; None while no gate is on."""
    return pool.pool_refresh(project) if gates_on(project) else None


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
        if status is None and not Membership.objects.filter(
            project=project, user_id=validator_id
        ).exists():
            raise DomainError("No such validator in this project.", code="not_found")
        if status is None:
            raise DomainError("This validator has not failed the test.", code="conflict")
        status.qualification, status.quiz_items = "", []  # the next attempt is its last
        status.save(update_fields=["qualification", "quiz_items"])
        AuditLog.record(
            actor=actor, action="qualification_retest", project=project, validator=validator_id
        )


# Serving --------------------------------------------------------------------------------------


@dataclass
class Gate:
    """What the gates decided before the queue: a gold item to serve, or that nothing is
    served (`stop`), or neither (the queue serves a real item)."""

    item: GoldItem | None = None
    stop: bool = False
    status: ValidatorStatus | None = None


def before_queue(*, project: Project, validator: Any, skip: list[int]) -> Gate:
    """The test's next item while the validator has not passed it, or the gold item served to
    them and not answered yet (unless they skipped it)."""
    if not gates_on(project):
        # Turning the gates off ends no pause: an admin lifts it (requalify).
        return Gate(stop=bool(ended(project, validator)))
    status = status_of(project, validator)
    if status.paused or status.qualification == FAILED:
        return Gate(stop=True, status=status)
    if quiz_on(project) and status.qualification != PASSED and not exempt(project):
        item = _quiz_item(project, validator, status, skip)
        return Gate(item=item, stop=item is None, status=status)
    if status.gold_pending is not None:
        if status.gold_pending not in skip:
            item = GoldItem.objects.filter(pk=status.gold_pending).first()
            if item is not None:
                return Gate(item=item, status=status)
        ValidatorStatus.objects.filter(pk=status.pk).update(gold_pending=None)
    return Gate(status=status)


def gold_instead(
    *,
    project: Project,
    validator: Any,
    status: ValidatorStatus | None,
    params: dict[str, Any],
    skip: list[int],
) -> GoldItem | None:
    """At `gold_rate`, a gold item in place of the queue's next real item, while a real one is
    there to serve: the queue's choice is read either way, so both take the same work."""
    rate = project.setting("gold_rate")
    if status is None or rate <= 0 or _random.random() >= rate:
        return None
    if sql.choose_candidate(params, skip, wait=True) is None:
        return None
    answered = GoldAnswer.objects.filter(validator=validator, project=project)
    item = (
        GoldItem.objects.filter(project=project, kind=GoldItem.Kind.POOL)
        .exclude(author_id=validator.pk)
        .exclude(pk__in=answered.values("gold_item_id"))
        .order_by("?")
        .first()
    )
    if item is not None:
        ValidatorStatus.objects.filter(pk=status.pk).update(gold_pending=item.pk)
    return item


def _quiz_item(
    project: Project, validator: Any, status: ValidatorStatus, skip: list[int]
) -> GoldItem | None:
    if not status.quiz_items:
        _new_attempt(project, validator, status)
    answered = set(
        GoldAnswer.objects.filter(
            validator=validator,
            project=project,
            attempt=status.quiz_attempt,
            phase=GoldAnswer.Phase.QUALIFICATION,
        ).values_list("gold_item_id", flat=True)
    )
    due = [pk for pk in status.quiz_items if pk not in answered]
    # A skipped item of the test comes back after the others.
    due = [pk for pk in due if pk not in skip] + [pk for pk in due if pk in skip]
    return GoldItem.objects.filter(pk=due[0]).first() if due else None


def _new_attempt(project: Project, validator: Any, status: ValidatorStatus) -> None:
    questions = [g.pk for g in pool.current_questions(project)]
    earlier = set(
        GoldAnswer.objects.filter(validator=validator, project=project).values_list(
            "gold_item_id", flat=True
        )
    )
    drawn = pool.draw(project, validator, project.setting("qualification_items"), earlier)
    status.quiz_items = questions + drawn
    status.quiz_attempt += 1
    status.save(update_fields=["quiz_items", "quiz_attempt"])


def is_gold(project: Project, item_id: int) -> bool:
    return GoldItem.objects.filter(project=project, pk=item_id).exists()


# Answering ------------------------------------------------------------------------------------


def gold_vote(
    *,
    project: Project,
    item_id: int,
    validator: Any,
    label: str,
    answer: str,
    flags: list[str],
    seconds_spent: int,
) -> tuple[Vote, bool]:
    """A vote on a gold item: recorded as the validator's answer to the test or to a gold
    check, and answered as a vote is (the same shape, a repeat is not an error). A gold check
    that brings their accuracy below gold_min_accuracy pauses them, then (a step of its own,
    as an unqualifying) their votes since their last passed gold item stop counting."""
    response = {"label": label, "answer": answer}
    with transaction.atomic():
        gold = GoldItem.objects.filter(project=project, pk=item_id).first()
        if gold is None:
            raise DomainError("No such item in this project.", code="not_found")
        status = status_of(project, validator, lock=True)
        previous = GoldAnswer.objects.filter(gold_item=gold, validator=validator).last()
        served = _served_now(project, status, gold, previous)
        if served is None:
            return _repeat(gold, validator, previous, response, flags), False
        if status.paused or status.qualification == FAILED:
            raise DomainError(ENDED[PAUSED if status.paused else FAILED], code="forbidden")
        phase, attempt = served
        GoldAnswer.objects.create(
            gold_item=gold,
            project=project,
            validator=validator,
            phase=phase,
            attempt=attempt,
            flags=flags,
            seconds_spent=seconds_spent,
            correct=is_right(project, gold, **response),
            **response,
        )
        if phase == GoldAnswer.Phase.QUALIFICATION:
            _score_attempt(project, validator, status)
            paused = False
        else:
            paused = _count_gold(project, validator, status, is_right(project, gold, **response))
    if paused:
        _discount(project, validator, status)
    vote = Vote(
        validator=validator, label=label, answer=answer, flags=flags, seconds_spent=seconds_spent
    )
    vote.item_id = gold.pk
    return vote, True


def _served_now(
    project: Project, status: ValidatorStatus, gold: GoldItem, previous: GoldAnswer | None
) -> tuple[str, int] | None:
    """The phase and attempt of an answer to `gold` now, or None when it is not being served
    to this validator (a repeat, or an item never served)."""
    in_test = status.qualification != PASSED and quiz_on(project) and not exempt(project)
    fresh = previous is None or previous.attempt != status.quiz_attempt
    if in_test and gold.pk in status.quiz_items and fresh:
        return GoldAnswer.Phase.QUALIFICATION, status.quiz_attempt
    if status.gold_pending == gold.pk and previous is None:
        return GoldAnswer.Phase.GOLD, 0
    return None


def _repeat(
    gold: GoldItem,
    validator: Any,
    previous: GoldAnswer | None,
    response: dict[str, str],
    flags: list[str],
) -> Vote:
    if previous is None:
        raise DomainError(
            "This item was not served to you; fetch the next item instead.", code="conflict"
        )
    same = (previous.label, previous.answer) == (response["label"], response["answer"])
    if not same or sorted(previous.flags) != flags:
        raise DomainError(
            "You already voted on this item with a different answer; votes cannot change.",
            code="conflict",
        )
    vote = Vote(
        validator=validator, flags=previous.flags, seconds_spent=previous.seconds_spent, **response
    )
    vote.item_id = gold.pk
    return vote


def is_right(project: Project, gold: GoldItem, *, label: str, answer: str) -> bool:
    """Whether a response matches a gold item: its label, or in free-text projects its
    answers by the project's answer rules (as validators' answers are matched)."""
    if project.is_free_text:
        rules = AnswerRules.of(project)
        return rules.matches(Response(answer, label), gold.gold_answers, gold.gold_label)
    return label == gold.gold_label


def _score_attempt(project: Project, validator: Any, status: ValidatorStatus) -> None:
    """Once every item of the attempt is answered: passed, another attempt, or failed."""
    answers = GoldAnswer.objects.filter(
        validator=validator,
        project=project,
        attempt=status.quiz_attempt,
        phase=GoldAnswer.Phase.QUALIFICATION,
        gold_item_id__in=status.quiz_items,
    )
    outcomes = list(answers.values_list("correct", flat=True))
    if len(outcomes) < len(status.quiz_items):
        return
    accuracy = sum(outcomes) / len(outcomes)
    if accuracy >= project.setting("qualification_min_accuracy"):
        status.qualification = PASSED
    elif status.quiz_attempt >= project.setting("qualification_attempts"):
        status.qualification = FAILED
    else:
        status.quiz_items = []  # the next item served draws a new attempt
    status.save(update_fields=["qualification", "quiz_items"])
    if status.qualification:
        AuditLog.record(
            actor=None,
            action=f"qualification_{status.qualification}",
            project=project,
            validator=validator.pk,
            attempt=status.quiz_attempt,
            accuracy=round(accuracy, 4),
        )


def _count_gold(project: Project, validator: Any, status: ValidatorStatus, right: bool) -> bool:
    """Count a gold check; whether it pauses the validator now."""
    status.gold_seen += 1
    status.gold_pending = None
    if right:
        status.gold_correct += 1
        latest = Vote.objects.filter(item__project=project, validator=validator).order_by("-id")
        status.gold_mark = latest.values_list("id", flat=True).first() or 0
    failing = status.gold_seen >= project.setting(
        "gold_min_count"
    ) and status.gold_correct / status.gold_seen < project.setting("gold_min_accuracy")
    if failing:
        status.paused, status.paused_at = True, timezone.now()
    status.save(
        update_fields=[
            "gold_seen",
            "gold_correct",
            "gold_pending",
            "gold_mark",
            "paused",
            "paused_at",
        ]
    )
    return failing


def _discount(project: Project, validator: Any, status: ValidatorStatus) -> None:
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
