"""The crowd gates (docs/validation.md, "Validation with a crowd"): the qualification test a
new validator answers first, and the gold checks mixed in while they work.

Both serve gold items through the queue, like any item: the page and the API cannot tell them
apart, and serving or answering one runs as many statements as a real item (annotation.crowd.sql;
answering is annotation.crowd.answering). The gates cost no statement while a project has
neither (the queue's own statements skip a validator they stopped); with them, one read of the
validator's status per item served, and on the vote path nothing beyond the status the vote
already reads (`vote_state`)."""

import random
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from annotation.crowd import pool
from annotation.errors import DomainError
from annotation.models import (
    GoldAnswer,
    GoldItem,
    Membership,
    Project,
    ValidatorStatus,
)

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
