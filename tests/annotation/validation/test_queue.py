import threading
from collections import Counter

import pytest
from django.db import connection

from annotation.models import Lease, ValidationItem, Vote
from annotation.validation.services.queue import next_item
from annotation.validation.services.votes import vote_cast
from tests.factories import ProjectFactory, member, submitted_perturbation, vote_all

pytestmark = pytest.mark.django_db


def test_queue_never_gives_own_item_or_the_same_item_twice(no_controls, people, crowd):
    author = member(no_controls, "both", "expert", "validator")
    own = submitted_perturbation(no_controls, author)
    other = submitted_perturbation(no_controls, people["expert"])
    item = next_item(project=no_controls, validator=author)
    assert item == other.item
    assert next_item(project=no_controls, validator=author) == item  # the lease holds it
    vote_cast(project=item.project, item_id=item.pk, validator=author, label="negative")
    assert next_item(project=no_controls, validator=author) is None
    assert own.item.votes.count() == 0


def test_queue_prefers_items_closest_to_completion_then_oldest(no_controls, people, crowd):
    first, second, third = (submitted_perturbation(no_controls, people["expert"]) for _ in range(3))
    vote_all(third.item, crowd[:2], ["negative"] * 2)
    vote_all(second.item, crowd[:2], ["negative"] * 2)
    for validator in crowd[2:5]:
        assert next_item(project=no_controls, validator=validator) == second.item
    # second now has 2 votes and 3 leases: full. third is next.
    assert next_item(project=no_controls, validator=crowd[5]) == third.item
    assert first.item.votes.count() == 0


def test_skipped_items_are_released_and_passed_over(no_controls, people, crowd):
    first, second = (submitted_perturbation(no_controls, people["expert"]) for _ in range(2))
    validator = crowd[0]
    assert next_item(project=no_controls, validator=validator) == first.item
    # Skipping the leased item releases it and serves the next one instead.
    assert next_item(project=no_controls, validator=validator, skip=[first.item.pk]) == second.item
    assert list(Lease.objects.filter(validator=validator).values_list("item_id", flat=True)) == [
        second.item.pk
    ]
    both = [first.item.pk, second.item.pk]
    assert next_item(project=no_controls, validator=validator, skip=both) is None


def test_next_returns_204_when_nothing_is_left(no_controls, people, client_for):
    response = client_for(people["validator"]).get(
        f"/api/projects/{no_controls.slug}/validation/next/"
    )
    assert response.status_code == 204


def test_controls_are_mixed_in_at_the_control_rate(project, people):
    project.settings = {**project.settings, "control_rate": 0.25}
    project.save()
    for _ in range(12):
        submitted_perturbation(project, people["expert"])
    controls = ValidationItem.objects.filter(project=project, control__isnull=False)
    assert controls.count() == 4  # 4 of 16 items
    control = controls.first()
    assert control.fields == control.control.fields and control.gold_label == control.control.label


@pytest.mark.django_db(transaction=True)
def test_concurrent_validators_give_every_item_exactly_its_votes():
    assert connection.vendor == "postgresql"
    project = ProjectFactory(settings={"control_rate": 0})
    experts = [member(project, f"author{i}", "expert") for i in range(2)]
    validators = [member(project, f"v{i}", "validator") for i in range(18)]
    validators += [member(project, "dual", "expert", "validator")]
    dual = validators[-1]
    items = [submitted_perturbation(project, experts[i % 2]).item for i in range(12)]
    own = submitted_perturbation(project, dual).item
    submitted: list[tuple[int, int]] = []
    errors: list[BaseException] = []

    def work(validator):  # type: ignore[no-untyped-def]
        try:
            while (item := next_item(project=project, validator=validator)) is not None:
                vote_cast(
                    project=item.project, item_id=item.pk, validator=validator, label="negative"
                )
                submitted.append((item.pk, validator.pk))
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
    votes = list(Vote.objects.values_list("item_id", "validator_id"))
    assert sorted(votes) == sorted(submitted)  # no submitted vote is missing
    assert len(set(votes)) == len(votes)  # nobody voted twice
    per_item = Counter(item_id for item_id, _ in votes)
    assert {per_item[item.pk] for item in [*items, own]} == {5}, per_item
    assert (own.pk, dual.pk) not in votes
    assert set(ValidationItem.objects.values_list("status", flat=True)) == {"resolved"}


def test_items_left_counts_what_the_validator_could_still_be_given(no_controls, people, crowd):
    """items_left is counted without a per-item subquery; it must equal the queue's rule,
    checked item by item here, as leases and votes come and go."""
    from django.utils import timezone

    from annotation.validation.services.queue import items_left

    no_controls.settings = {**no_controls.settings, "votes_per_item": 3, "majority": 2}
    no_controls.save()
    items = [submitted_perturbation(no_controls, people["expert"]).item for _ in range(5)]
    me = crowd[0]

    def check() -> None:
        now = timezone.now()
        expected = sum(
            item.status == "open"
            and item.author_id != me.pk
            and not item.votes.filter(validator=me).exists()
            and item.counted_votes
            + item.leases.filter(expires_at__gt=now).exclude(validator=me).count()
            < 3 + item.extra_votes
            for item in ValidationItem.objects.filter(project=no_controls)
        )
        assert items_left(project=no_controls, validator=me) == expected

    check()
    for validator in crowd[1:4]:  # three leases fill the first item for everyone else
        next_item(project=no_controls, validator=validator)
    check()
    vote_cast(project=items[1].project, item_id=items[1].pk, validator=crowd[4], label="negative")
    vote_cast(project=items[1].project, item_id=items[1].pk, validator=crowd[5], label="negative")
    next_item(project=no_controls, validator=crowd[6])  # a lease on the nearly full item
    check()
    next_item(project=no_controls, validator=me)  # my own lease never counts against me
    check()
    vote_cast(project=items[2].project, item_id=items[2].pk, validator=me, label="positive")
    check()
    assert items_left(project=no_controls, validator=me) == 2
