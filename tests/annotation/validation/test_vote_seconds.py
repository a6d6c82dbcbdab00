"""Each validator's number of votes and median seconds (the statistics and the Validators page)
stay equal to a count of the votes themselves, whichever path moves them: votes cast and
undone, votes cleared with an item sent back, imported (COPY), created and deleted in bulk,
edited, and a whole other project deleted."""

import random
import statistics
from collections import defaultdict

import pytest

from annotation.data.services.removal import project_delete
from annotation.errors import DomainError
from annotation.models import ValidationItem, Vote
from annotation.validation.services.quality import item_send_back
from annotation.validation.services.votes import vote_cast, vote_undo
from annotation.validation.stats import vote_figures
from tests.factories import ProjectFactory, import_votes, submitted_perturbation

pytestmark = pytest.mark.django_db


def assert_figures_match_the_votes(project):  # type: ignore[no-untyped-def]
    seconds = defaultdict(list)
    for validator_id, spent in Vote.objects.filter(item__project=project).values_list(
        "validator_id", "seconds_spent"
    ):
        seconds[validator_id].append(spent)
    figures, overall = vote_figures(project)
    assert figures == {v: (len(s), statistics.median(s)) for v, s in seconds.items()}
    every = [s for spent in seconds.values() for s in spent]
    assert overall == (statistics.median(every) if every else None)


# The voters' counts are taken once the vote commits (transaction.on_commit).
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("seed", range(3))
def test_vote_figures_follow_every_path_that_moves_a_vote(
    no_controls, people, crowd, client_for, seed
):
    rng = random.Random(seed)
    items = [submitted_perturbation(no_controls, people["expert"]).item for _ in range(5)]
    for _ in range(60):
        item, validator = rng.choice(items), rng.choice(crowd)
        try:
            if rng.random() < 0.8:
                vote_cast(project=no_controls, item_id=item.pk, validator=validator,
                          label=rng.choice(["positive", "negative"]),
                          seconds_spent=rng.randint(0, 9))  # fmt: skip
            else:
                vote_undo(item=item, validator=validator)
        except DomainError:
            pass  # a resolved item, or nothing to undo: nothing moved
        assert_figures_match_the_votes(no_controls)
    # An item sent back with its votes cleared: its votes leave the figures.
    voted = ValidationItem.objects.filter(pk__in=[i.pk for i in items], votes__isnull=False)
    item_send_back(item=voted.first(), clear_votes=True, extra_votes=0)
    assert_figures_match_the_votes(no_controls)
    # Imported votes (COPY on PostgreSQL), then edits and deletes straight on the table.
    lines = [{"id": f"x{n}", "fields": {"text": f"Text {n}."},
              "label_distribution": {"positive": ["w1", "w2"], "negative": ["w3"]}}
             for n in range(4)]  # fmt: skip
    assert import_votes(client_for(people["admin"]), no_controls, lines).status_code == 201
    assert_figures_match_the_votes(no_controls)
    imported = Vote.objects.filter(item__project=no_controls, item__external_id__startswith="x")
    imported.filter(item__external_id="x0").update(seconds_spent=42)
    imported.filter(item__external_id="x1").update(counts=False)
    assert_figures_match_the_votes(no_controls)
    imported.filter(item__external_id="x2").delete()
    assert_figures_match_the_votes(no_controls)
    # Another project with votes, deleted whole: this project's figures do not move.
    other = ProjectFactory(slug="other")
    Vote.objects.bulk_create(
        Vote(item=submitted_perturbation(other, people["expert"]).item, validator=v,
             label="positive", seconds_spent=7)
        for v in crowd[:3]
    )  # fmt: skip
    assert_figures_match_the_votes(other)
    project_delete(project=other, actor=people["admin"], confirm="other")
    assert_figures_match_the_votes(no_controls)
