"""Gold checks while working: served like any item, and a validator whose gold accuracy falls
below the bar is paused at once, their votes since their last passed gold item discounted."""

import random

import pytest

from annotation.crowd import gates
from annotation.models import AuditLog, GoldAnswer, GoldItem, ValidationItem, ValidatorStatus, Vote
from annotation.validation.services.queue import next_item
from annotation.validation.services.votes import vote_cast
from tests.annotation.crowd.conftest import answer_next, configure, right_label, wrong_label
from tests.factories import serve

pytestmark = pytest.mark.django_db


def gold_next(project, validator, *, right):  # type: ignore[no-untyped-def]
    """Answer one gold item: with gold_rate 1 the queue serves gold while real items remain."""
    configure(project, gold_rate=1.0)
    item = answer_next(project, validator, right=right)
    configure(project, gold_rate=0.0)
    assert isinstance(item, GoldItem)
    return item


def real_next(project, validator, label=None):  # type: ignore[no-untyped-def]
    item = next_item(project=project, validator=validator)
    assert isinstance(item, ValidationItem)
    vote_cast(project=project, item_id=item.pk, validator=validator,
              label=label or right_label(item))  # fmt: skip
    return item


# The voters' counts are taken once the vote commits (transaction.on_commit).
@pytest.mark.django_db(transaction=True)
def test_a_failing_validator_is_paused_and_their_recent_votes_reopen_items(
    crowd_project, workers, people, client
):  # fmt: skip
    configure(crowd_project, gold_min_count=2, gold_min_accuracy=0.75)
    careless, others = workers[0], workers[1:3]
    first = real_next(crowd_project, careless)
    gold_next(crowd_project, careless, right=True)  # passed: `first` stays counted
    second = real_next(crowd_project, careless, label="positive")  # wrong (intended: negative)
    # Two others vote on `second` with the careless one: 2 of 3 resolve it, accepted.
    for other in others:
        serve(second, other)
        vote_cast(project=crowd_project, item_id=second.pk, validator=other, label="negative")
    second.refresh_from_db()
    assert second.status == "resolved"
    gold_next(crowd_project, careless, right=False)  # 1 of 2 right: below 0.75, paused
    status = ValidatorStatus.objects.get(project=crowd_project, validator=careless)
    assert (status.paused, status.gold_seen, status.gold_correct) == (True, 2, 1)
    counts = dict(Vote.objects.filter(validator=careless).values_list("item_id", "counts"))
    assert counts == {first.pk: True, second.pk: False}
    second.refresh_from_db()
    assert (second.status, second.counted_votes) == ("open", 2)  # waits for a replacement
    (entry,) = AuditLog.objects.filter(action="validator_paused")
    assert entry.details == {"validator": careless.pk, "gold_seen": 2, "gold_accuracy": 0.5,
                             "votes_discounted": 1}  # fmt: skip
    # The replacement vote resolves it again; the paused validator is served nothing.
    serve(second, workers[3])
    vote_cast(project=crowd_project, item_id=second.pk, validator=workers[3], label="negative")
    second.refresh_from_db()
    assert (second.status, second.counted_votes) == ("resolved", 3)
    assert next_item(project=crowd_project, validator=careless) is None
    client.force_login(people["admin"])
    page = client.get(f"/p/{crowd_project.slug}/validators/").content.decode()
    row = page[page.index(">worker0<") :].split("</tr>")[0]
    assert "paused" in row and "50.0%" in row
    api = client.get(f"/api/projects/{crowd_project.slug}/validators/").json()["results"]
    mine = next(v for v in api if v["validator"] == "worker0")
    assert (mine["paused"], mine["gold_seen"], mine["gold_accuracy"]) == (True, 2, 0.5)
    assert mine["qualification"] is None  # no test in this project


def test_requalifying_lifts_the_pause(crowd_project, workers, people):
    from annotation.validation.services.quality import validator_set_qualified

    configure(crowd_project, gold_min_count=1, gold_min_accuracy=1.0)
    gold_next(crowd_project, workers[0], right=False)
    assert next_item(project=crowd_project, validator=workers[0]) is None
    validator_set_qualified(project=crowd_project, validator_id=workers[0].pk, qualified=True,
                            actor=people["admin"])  # fmt: skip
    assert isinstance(next_item(project=crowd_project, validator=workers[0]), ValidationItem)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_gold_accuracy_and_the_pause_follow_their_definition(crowd_project, workers, seed):
    """Random runs of right and wrong gold answers, against a plain recount: the accuracy is
    right / answered, and the pause comes at the first answer with at least gold_min_count
    answered and accuracy below gold_min_accuracy."""
    rng = random.Random(seed)
    min_count, min_accuracy = rng.randint(1, 3), rng.choice([0.5, 0.6, 0.75])
    configure(crowd_project, gold_min_count=min_count, gold_min_accuracy=min_accuracy)
    worker = workers[seed % len(workers)]
    answers = [rng.random() < 0.6 for _ in range(6)]
    expected_pause = next(
        (n for n in range(1, 7)
         if n >= min_count and sum(answers[:n]) / n < min_accuracy),
        None,
    )  # fmt: skip
    given = 0
    for right in answers:
        if gates.ended(crowd_project, worker):
            break
        gold_next(crowd_project, worker, right=right)
        given += 1
    status = ValidatorStatus.objects.get(project=crowd_project, validator=worker)
    assert given == (expected_pause or 6)
    assert status.paused == (expected_pause is not None)
    rows = GoldAnswer.objects.filter(validator=worker, phase="gold")
    assert [a.correct for a in rows] == answers[:given]
    figures = gates.gate_figures(crowd_project, status)
    assert figures["gold_seen"] == given
    assert figures["gold_accuracy"] == round(sum(answers[:given]) / given, 4)


def test_the_gates_add_no_query_to_a_vote(crowd_project, workers, django_assert_num_queries):
    """The vote reads the validator's gate in the statement that already reads their status."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries_of_a_vote(validator):  # type: ignore[no-untyped-def]
        item = next_item(project=crowd_project, validator=validator)
        with CaptureQueriesContext(connection) as captured:
            vote_cast(project=crowd_project, item_id=item.pk, validator=validator,
                      label=right_label(item))  # fmt: skip
        return len(captured)

    without = queries_of_a_vote(workers[0])
    configure(crowd_project, qualification_items=1, gold_rate=0.0, gold_min_count=5)
    ValidatorStatus.objects.update_or_create(project=crowd_project, validator=workers[1],
                                             defaults={"qualification": "passed"})  # fmt: skip
    assert queries_of_a_vote(workers[1]) == without


def test_a_skipped_gold_item_is_not_counted_and_not_served_again(crowd_project, workers):
    configure(crowd_project, gold_rate=1.0)
    item = next_item(project=crowd_project, validator=workers[0])
    assert isinstance(item, GoldItem)
    configure(crowd_project, gold_rate=0.0)
    after = next_item(project=crowd_project, validator=workers[0], skip=[item.pk])
    assert isinstance(after, ValidationItem)
    assert ValidatorStatus.objects.get(validator=workers[0]).gold_seen == 0


def test_no_gold_once_no_real_item_is_left(crowd_project, workers, people):
    configure(crowd_project, gold_rate=1.0)
    crowd_project.items.update(status="closed")
    assert next_item(project=crowd_project, validator=workers[0]) is None


def test_a_gold_vote_not_served_is_refused_like_a_real_one(crowd_project, workers):
    gold = GoldItem.objects.filter(project=crowd_project).first()
    with pytest.raises(Exception, match="was not served to you"):
        vote_cast(project=crowd_project, item_id=gold.pk, validator=workers[0], label="positive")
    with pytest.raises(Exception, match="No such item in this project"):
        vote_cast(project=crowd_project, item_id=2**40 + 7, validator=workers[0], label="positive")
    assert wrong_label(gold) != gold.gold_label
