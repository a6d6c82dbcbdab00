"""Free-text resolution (docs/task-types.md) under concurrent validators, and its rule checked
against a plain restatement of the spec on random responses."""

import random
import threading
from collections import Counter

import pytest
from django.db import connection
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.authoring.services.drafts import perturbation_save
from annotation.models import Perturbation, ValidationItem, ValidatorStatus, Vote
from annotation.projects.services import project_create
from annotation.text.answers import SQUAD, Response
from annotation.validation.services.queue import next_item
from annotation.validation.services.votes import vote_cast
from tests.factories import ExampleFactory, member
from tests.oracles.squad import f1_score

ANSWERS = ["1911", "the 1911", "Marie Curie", "Marie", "Pierre", "Pierre Curie"]


def spec_outcome(responses: list[tuple[str, str]], gold: list[str]) -> str:
    """docs/task-types.md restated: >= 3 responses matching the author: accepted; else >= 3 answers
    matching one of them: disputed; else no majority."""

    def match(response: tuple[str, str], answers: list[str], label: str = "") -> bool:
        answer, extra = response
        if extra or label:
            return extra == label and bool(extra)
        return max(f1_score(answer, a) for a in answers) >= 0.8

    if sum(match(r, gold) for r in responses) >= 3:
        return "accepted"
    for candidate in responses:
        support = sum(match(r, [candidate[0]], candidate[1]) for r in responses)
        if support >= 3 and not candidate[1]:
            return "disputed"
    return "no_majority"


response = st.one_of(st.sampled_from(ANSWERS).map(lambda a: (a, "")), st.just(("", "unanswerable")))


@given(st.lists(response, min_size=5, max_size=5), st.sampled_from(ANSWERS))
@settings(max_examples=300, deadline=None)
def test_resolution_follows_the_spec_on_random_responses(responses, gold) -> None:  # type: ignore[no-untyped-def]
    outcome = SQUAD.resolve([Response(a, label) for a, label in responses], [gold], 3)
    assert outcome.status == spec_outcome(responses, [gold])
    if outcome.status == "disputed":
        supporters = [
            r for r in responses if not r[1] and f1_score(r[0], outcome.answers[0]) >= 0.8
        ]
        assert len(supporters) >= 3


@pytest.mark.django_db(transaction=True)
def test_concurrent_free_text_validators_fill_every_item_exactly() -> None:
    assert connection.vendor == "postgresql"
    admin = member_admin()
    project = project_create(
        user=admin, name="QA", slug="qa", task_type="free_text",
        fields=[{"name": "context", "editable": False}, {"name": "question"}],
        labels=[], extra_labels=["unanswerable"], tags=[{"name": "order"}],
        settings={"control_rate": 0, "max_edit_ratio": 1.0},
    )  # fmt: skip
    expert = member(project, "author", "expert")
    validators = [member(project, f"v{i}", "validator") for i in range(14)]
    for n in range(10):
        pivot = ExampleFactory(
            project=project, external_id=f"q{n}", label="", answers=["1903"],
            fields={"context": "Curie won in 1903 and 1911.", "question": f"When first? {n}"},
        )  # fmt: skip
        perturbation_save(
            author=expert, pivot=pivot, fields={"question": f"When again? {n}"},
            answers=["1911"], tags=["order"], submit=True,
        )  # fmt: skip
    errors: list[BaseException] = []

    def work(validator):  # type: ignore[no-untyped-def]
        rng = random.Random(validator.pk)
        try:
            while (item := next_item(project=project, validator=validator)) is not None:
                if rng.random() < 0.1:
                    vote_cast(
                        project=item.project,
                        item_id=item.pk,
                        validator=validator,
                        label="unanswerable",
                    )
                else:
                    vote_cast(
                        project=item.project,
                        item_id=item.pk,
                        validator=validator,
                        answer=rng.choice(ANSWERS),
                    )
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(v,)) for v in validators]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    per_item = Counter(Vote.objects.values_list("item_id", flat=True))
    assert set(per_item.values()) == {5} and len(per_item) == 10
    for item in ValidationItem.objects.select_related("perturbation"):
        assert item.status == "resolved"
        responses = list(item.votes.values_list("answer", "label"))
        assert item.perturbation is not None
        assert item.perturbation.status == spec_outcome(responses, ["1911"])
    # Agreement counters equal a recount against each item's outcome.
    for status in ValidatorStatus.objects.filter(project=project):
        votes = Vote.objects.filter(validator_id=status.validator_id).select_related("item")
        agreed = 0
        for vote in votes:
            outcome = vote.item
            if vote.label or outcome.majority_label:
                agreed += bool(vote.label) and vote.label == outcome.majority_label
            elif outcome.majority_answers:
                agreed += max(f1_score(vote.answer, a) for a in outcome.majority_answers) >= 0.8
        assert (status.resolved_votes, status.agreed_votes) == (votes.count(), agreed)
    assert Perturbation.objects.filter(status="submitted").count() == 0


def member_admin():  # type: ignore[no-untyped-def]
    from tests.factories import UserFactory

    return UserFactory(username="boss", is_staff=True)
