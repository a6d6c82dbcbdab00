"""Answering a gold item (docs/validation.md, "Validation with a crowd"): an item of the
qualification test, or a gold check served while working. The answer is recorded as the
validator's, inside the vote's own transaction, in as many statements as a real vote
(annotation.crowd.sql), and answered as a vote is (the same shape; a repeat is not an error).

A gold check that brings their accuracy below gold_min_accuracy pauses them (`gold_answer`
returns their status); the vote registers a step after its commit (`transaction.on_commit`)
that takes their votes since their last passed gold item out of the counts, as an unqualifying
does (annotation.validation.services.votes: the gates sit below validation, which serves and
counts through them)."""

import json
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from annotation.crowd import sql
from annotation.crowd.gates import ENDED, FAILED, PASSED, PAUSED, in_test, is_gold
from annotation.errors import DomainError
from annotation.models import AuditLog, GoldAnswer, GoldItem, Project, ValidatorStatus
from annotation.text.answers import AnswerRules, Response

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
