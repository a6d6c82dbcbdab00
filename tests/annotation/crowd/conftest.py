"""Fixtures of the crowd tests: a project with labelled originals (the gold pool's source) and
real items to validate, and helpers that answer whatever the queue serves."""

from typing import Any

import pytest

from annotation.crowd import pool
from annotation.models import GoldItem, ValidationItem
from annotation.validation.services.queue import next_item
from annotation.validation.services.votes import vote_cast
from tests.factories import ExampleFactory, member, submitted_perturbation


def configure(project: Any, **settings: Any) -> Any:
    project.settings = {**project.settings, **settings}
    project.save()
    return project


@pytest.fixture
def crowd_project(project, people):  # type: ignore[no-untyped-def]
    """Six labelled originals in the gold pool (three positive, three negative), and four
    perturbations open for validation; no controls."""
    configure(project, control_rate=0, votes_per_item=3, majority=2)
    for n in range(6):
        label = "positive" if n % 2 == 0 else "negative"
        ExampleFactory(project=project, external_id=f"gold-{n}", label=label,
                       fields={"text": f"A gold review number {n}."})  # fmt: skip
    pool.pool_refresh(project)
    for _ in range(4):
        submitted_perturbation(project, people["expert"])
    return project


@pytest.fixture
def workers(crowd_project):  # type: ignore[no-untyped-def]
    return [member(crowd_project, f"worker{i}", "validator") for i in range(6)]


def right_label(item: Any) -> str:
    """The label a careful validator gives: a gold item's own, a perturbation's intended one
    (read from the models, not from the gates)."""
    if isinstance(item, GoldItem):
        return str(item.gold_label)
    return str(ValidationItem.objects.get(pk=item.pk).gold_label)


def wrong_label(item: Any) -> str:
    return "negative" if right_label(item) == "positive" else "positive"


def answer_next(project: Any, validator: Any, *, right: bool = True) -> Any:
    """Fetch the next item as the page does and answer it; returns the item, or None."""
    item = next_item(project=project, validator=validator)
    if item is None:
        return None
    label = right_label(item) if right else wrong_label(item)
    vote_cast(project=project, item_id=item.pk, validator=validator, label=label)
    return item
