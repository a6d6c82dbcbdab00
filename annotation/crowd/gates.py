"""The crowd gates (docs/validation.md, "Validation with a crowd"): the qualification test a
new validator answers first, and the gold checks mixed in while they work.

Both serve gold items through the queue, like any item: the page and the API cannot tell them
apart, and serving or answering one runs as many statements as a real item (annotation.crowd.sql;
answering, `gold_answer` below). The gates cost no statement while a project has
neither (the queue's own statements skip a validator they stopped); with them, one read of the
validator's status per item served, and on the vote path nothing beyond the status the vote
already reads (`vote_state`)."""

import json
import random
from dataclasses import dataclass
from typing import Any

from django.db.models import Q
from django.utils import timezone

from annotation.crowd import pool, sql
from annotation.errors import DomainError
from annotation.models import (
    AuditLog,
    GoldAnswer,
    GoldItem,
    Membership,
    Project,
    ValidatorStatus,
)
from annotation.text.answers import AnswerRules, Response

_random = random.Random()
# The settings of the gates and of a study, edited where studies are made (the Studies page)
# as on Settings.
GATE_SETTINGS = (
    "qualification_items",
    "qualification_min_accuracy",
    "qualification_attempts",
    "gold_rate",
    "gold_min_accuracy",
    "gold_min_count",
    "items_per_participant",
    "lease_ttl",
)
PASSED, FAILED, PAUSED = "passed", "failed", "paused"
ENDED = {
    FAILED: "You did not pass this project's qualification test, so your work on it has ended. "
    "Thank you for your time.",
    PAUSED: "Your work on this project is paused: too many of your recent answers disagreed "
    "with items whose answer is known. An admin of the project may resume it.",
}
ENDED_PARTICIPANT = (
    "Your work on this study has ended: too many of your recent answers disagreed with items "
    "whose answer is known. Thank you for your time."
)


def quiz_on(project: Project) -> bool:
    return bool(
        project.setting("qualification_items") or project.setting("qualification_questions")
    )


def gates_on(project: Project) -> bool:
    return quiz_on(project) or project.setting("gold_rate") > 0


def hides_left_and_undo(project: Project) -> bool:
    """Under the gates the pages show no count of items left and no undo, and undo is refused:
    both exist for real items only, so either would tell a gold item apart."""
    return gates_on(project)


def ended_message(gate: str, *, participant: bool) -> str:
    """Why a validator's work ended ("" while it goes on). A study's participant is not told
    that an admin may resume it: they cannot ask one, and their completion code says it ended."""
    if participant and gate == PAUSED:
        return ENDED_PARTICIPANT
    return ENDED.get(gate, "")


def exempt(project: Project) -> bool:
    """The project's admins (staff included) take no test: read from the roles `project_for`
    found, so that it costs no query."""
    return Membership.Role.ADMIN in getattr(project, "user_roles", ())


def in_test(project: Project, qualification: str) -> bool:
    """Whether a validator whose qualification is `qualification` answers the test before any
    real item: the project has a test, they have not passed it, and they are no admin of it."""
    return qualification != PASSED and quiz_on(project) and not exempt(project)


def check_vote_gate(project: Project, gate: str) -> None:
    """Refuse a vote on a real item from a validator the gates stopped, or one who has not
    passed the test yet (`gate` as `vote_state` reads it)."""
    if gate in ENDED:
        raise DomainError(ENDED[gate], code="forbidden")
    if in_test(project, gate):
        raise DomainError(
            "Answer the items you are served first; fetch the next item.", code="conflict"
        )


def status_of(project: Project, validator: Any) -> ValidatorStatus:
    status = ValidatorStatus.objects.filter(project=project, validator=validator).first()
    if status is None:
        status, _ = ValidatorStatus.objects.get_or_create(project=project, validator=validator)
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
        # A validator the gates stopped stays stopped (an admin lifts it): the queue's own
        # statements serve them nothing.
        return Gate()
    status = status_of(project, validator)
    if status.paused or status.qualification == FAILED:
        return Gate(stop=True, status=status)
    if in_test(project, status.qualification):
        item = _quiz_item(project, validator, status, skip)
        return Gate(item=item, stop=item is None, status=status)
    if status.gold_pending is not None:
        if status.gold_pending not in skip:
            item = GoldItem.objects.filter(pk=status.gold_pending).first()
            if item is not None:
                return Gate(item=item, status=status)
        ValidatorStatus.objects.filter(pk=status.pk).update(gold_pending=None)
    return Gate(status=status)


def gold_due(project: Project, status: ValidatorStatus | None) -> bool:
    """Whether this item served is a gold check (at `gold_rate`); the queue then serves one in
    place of the real item it locked, while a real one is there (crowd.sql.serve_gold)."""
    rate = project.setting("gold_rate")
    return status is not None and rate > 0 and _random.random() < rate


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
# Answering a gold item (docs/validation.md, "Validation with a crowd"): an item of the
# qualification test, or a gold check served while working. The answer is recorded as the
# validator's, inside the vote's own transaction, in as many statements as a real vote
# (annotation.crowd.sql), and answered as a vote is (the same shape; a repeat is not an error).
#
# A gold check that brings their accuracy below gold_min_accuracy pauses them (`gold_answer`
# returns their status); the vote registers a step after its commit (`transaction.on_commit`)
# that takes their votes since their last passed gold item out of the counts, as an unqualifying
# does (annotation.validation.services.votes: the gates sit below validation, which serves and
# counts through them).

NOT_SERVED = "This item was not served to you; fetch the next item instead."


@dataclass(frozen=True)
class GoldAnswered:
    """A gold item's answer as recorded (or the earlier, same one it repeats), whether it was
    new, and the validator's status if it paused them (for the vote's step after the commit)."""

    record: GoldAnswer
    created: bool
    paused: ValidatorStatus | None = None


def gold_answer(
    *,
    project: Project,
    item_id: int,
    validator: Any,
    label: str,
    answer: str,
    flags: list[str],
    seconds_spent: int,
) -> GoldAnswered:
    """Once the vote found no real item of that id: record the answer under the validator's
    status, locked, if it is a gold item served to them (404 when it is no gold item of the
    project; 409 when it was never served to them)."""
    status = sql.lock_status(project_id=project.pk, validator_id=validator.pk, item_id=item_id)
    if status is None and not is_gold(project, item_id):
        raise DomainError("No such item in this project.", code="not_found")
    if status is None:
        raise DomainError(NOT_SERVED, code="conflict")
    response = {"label": label, "answer": answer}
    state = sql.gold_state(item_id=item_id, validator_id=validator.pk)
    gold = state.item
    served = _served_now(project, status, gold, state.previous_attempt)
    if served is None:
        return GoldAnswered(_repeat(state.previous_id, response, flags), created=False)
    if status.paused or status.qualification == FAILED:
        raise DomainError(ENDED[PAUSED if status.paused else FAILED], code="forbidden")
    phase, attempt = served
    right = is_right(project, gold, **response)
    record = GoldAnswer(
        gold_item_id=gold.pk,
        project_id=project.pk,
        validator_id=validator.pk,
        phase=phase,
        attempt=attempt,
        flags=flags,
        seconds_spent=seconds_spent,
        correct=right,
        **response,
    )
    gold_check = phase == GoldAnswer.Phase.GOLD
    paused = _count_gold(project, status, right) if gold_check else False
    sql.write_answer(record, json.dumps(flags), status, mark=gold_check and right)
    if not gold_check:
        _score_attempt(project, validator, status)
    return GoldAnswered(record, created=True, paused=status if paused else None)


def _served_now(
    project: Project, status: ValidatorStatus, gold: GoldItem, previous_attempt: int | None
) -> tuple[str, int] | None:
    """The phase and attempt of an answer to `gold` now, or None when it is not being served
    to this validator (a repeat, or an item never served)."""
    fresh = previous_attempt is None or previous_attempt != status.quiz_attempt
    if in_test(project, status.qualification) and gold.pk in status.quiz_items and fresh:
        return GoldAnswer.Phase.QUALIFICATION, status.quiz_attempt
    if status.gold_pending == gold.pk and previous_attempt is None:
        return GoldAnswer.Phase.GOLD, 0
    return None


def _repeat(previous_id: int | None, response: dict[str, str], flags: list[str]) -> GoldAnswer:
    """The earlier answer, if this one repeats it (a real vote reads its earlier vote alike:
    one statement)."""
    if previous_id is None:
        raise DomainError(NOT_SERVED, code="conflict")
    previous = GoldAnswer.objects.get(pk=previous_id)
    same = (previous.label, previous.answer) == (response["label"], response["answer"])
    if not same or sorted(previous.flags) != flags:
        raise DomainError(
            "You already voted on this item with a different answer; votes cannot change.",
            code="conflict",
        )
    return previous


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


def _count_gold(project: Project, status: ValidatorStatus, right: bool) -> bool:
    """Count a gold check on the status (written with the answer); whether it pauses the
    validator now."""
    status.gold_seen += 1
    status.gold_pending = None
    status.gold_correct += right
    failing = status.gold_seen >= project.setting(
        "gold_min_count"
    ) and status.gold_correct / status.gold_seen < project.setting("gold_min_accuracy")
    if failing:
        status.paused, status.paused_at = True, timezone.now()
    return failing
