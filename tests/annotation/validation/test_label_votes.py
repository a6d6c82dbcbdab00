"""Each item's counted votes per label (label_votes, which the statistics read instead of the
votes) stay equal to a count of its votes, whatever the services do: votes, undos,
qualification changes of either sign, reopening, and vote import."""

import random
from collections import Counter

import pytest

from annotation.errors import DomainError
from annotation.models import ValidationItem, Vote
from annotation.validation.services.quality import item_reopen, validator_set_qualified
from annotation.validation.services.votes import vote_cast, vote_undo
from tests.factories import import_votes, submitted_perturbation

pytestmark = pytest.mark.django_db

LABELS = ["positive", "negative", "mixed"]


def assert_counts_match_the_votes(project):  # type: ignore[no-untyped-def]
    for item in ValidationItem.objects.filter(project=project):
        counted = Counter(
            Vote.objects.filter(item=item, counts=True).values_list("label", flat=True)
        )
        assert item.label_votes == dict(counted), item.pk
        assert item.counted_votes == sum(counted.values()), item.pk


# The voters' counts are taken once the vote commits (transaction.on_commit).
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("seed", range(4))
def test_label_votes_follow_every_service_that_moves_a_vote(no_controls, people, crowd, seed):
    rng = random.Random(seed)
    no_controls.extra_labels = LABELS[2:]
    no_controls.save()
    items = [submitted_perturbation(no_controls, people["expert"]).item for _ in range(4)]
    moves = Counter()
    for _ in range(150):
        item = rng.choice(items)
        validator = rng.choice(crowd)
        move = rng.choice(["vote"] * 6 + ["undo", "unqualify", "qualify", "qualify", "reopen"])
        try:
            if move == "vote":
                vote_cast(
                    project=item.project,
                    item_id=item.pk,
                    validator=validator,
                    label=rng.choice(LABELS),
                )
            elif move == "undo":
                vote_undo(item=item, validator=validator)
            elif move == "reopen":  # a resolved item, where there is one
                resolved = ValidationItem.objects.filter(pk__in=[i.pk for i in items])
                item = resolved.filter(status="resolved").first() or item
                item_reopen(item=item, extra_votes=1)
            else:
                validator_set_qualified(
                    project=no_controls,
                    validator_id=validator.pk,
                    qualified=move == "qualify",
                    actor=people["admin"],
                )
        except DomainError:
            continue  # refused (a resolved item, a repeat): nothing may have moved
        finally:
            assert_counts_match_the_votes(no_controls)
        moves[move] += 1
    # Every kind of change happened in this run, not only votes.
    assert set(moves) == {"vote", "undo", "unqualify", "qualify", "reopen"}, moves


def test_imported_votes_are_counted_per_label(project, people, client_for):
    lines = [
        {"id": "a", "fields": {"text": "Fine."}, "label_distribution": {
            "positive": ["w1", "w2", "w3"], "negative": ["w4"], "mixed": ["w5"]}},
        {"id": "b", "fields": {"text": "Bad."}, "label_distribution": {
            "negative": ["w1", "w2", "w3", "w4", "w5"]}},
    ]  # fmt: skip
    response = import_votes(client_for(people["admin"]), project, lines)
    assert response.status_code == 201, response.json()
    assert_counts_match_the_votes(project)
    assert sorted(
        ValidationItem.objects.filter(project=project).values_list("external_id", "label_votes")
    ) == [("a", {"positive": 3, "negative": 1, "mixed": 1}), ("b", {"negative": 5})]
