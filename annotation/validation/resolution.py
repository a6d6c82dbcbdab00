"""Resolution of an item once its counted votes reach votes_per_item (docs/validation.md)."""

import json
from collections import Counter
from collections.abc import Mapping

from django.db import transaction
from django.utils import timezone

from annotation.models import Perturbation, Project, ValidationItem
from annotation.text.answers import AnswerRules, Outcome, Response
from annotation.validation import sql
from annotation.webhooks import events


def majority_of(labels: list[str], majority: int) -> str:
    """The label chosen at least `majority` times, or "" if there is none."""
    return majority_in(Counter(labels), majority)


def majority_in(counts: Mapping[str, int], majority: int) -> str:
    """The label counted at least `majority` times in {label: votes}, or "" if there is none."""
    if not counts:
        return ""
    label, n = max(counts.items(), key=lambda kv: kv[1])
    return label if n >= majority else ""


def item_resolve(*, item: ValidationItem) -> None:
    """Resolve an item, locked by the caller, whose counted votes reached votes_needed and are
    in its label_votes."""
    project = item.project
    if project.is_free_text:
        outcome = free_text_outcome(item, project)
        item.majority_label, item.majority_answers = outcome.label, outcome.answers
        status = outcome.status
    else:
        item.majority_label = majority_in(item.label_votes, item.majority_needed(project))
        status = resolution_status(item.majority_label, item.gold_label, project.labels)
    item.status = ValidationItem.Status.RESOLVED
    item.resolved_at = timezone.now()
    sql.store_resolution(item, json.dumps(item.majority_answers), status)
    transaction.on_commit(lambda: events.item_resolved(item, status), robust=True)


def free_text_outcome(item: ValidationItem, project: Project) -> Outcome:
    """What the counted votes on an item of `project`, a free-text one, decide: its status and
    the answers or extra label agreed on. Resolution stores it; a row's history tells it."""
    counted = item.votes.filter(counts=True).values_list("answer", "label")
    return AnswerRules.of(project).resolve(
        [Response(a, label) for a, label in counted],
        item.gold_answers,
        item.majority_needed(project),
    )


def vote_agrees(label: str, answer: str, item: ValidationItem) -> bool:
    """Whether a vote on a resolved item agrees with its outcome (validator agreement)."""
    if not item.project.is_free_text:
        return label == item.majority_label
    rules = AnswerRules.of(item.project)
    return rules.matches(Response(answer, label), item.majority_answers, item.majority_label)


def resolution_status(majority: str, intended: str, task_labels: list[str]) -> str:
    if majority == intended:
        return Perturbation.Status.ACCEPTED
    if majority in task_labels:
        return Perturbation.Status.DISPUTED
    return Perturbation.Status.NO_MAJORITY
