"""What serving an item costs in statements, gates off: as much as before the crowd gates
existed (issue 50). A validator whom the gates stopped stays stopped once they are off, read by
the queue's own statements, not by one of its own."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import ValidationItem, ValidatorStatus
from annotation.validation.services.queue import next_item
from annotation.validation.services.votes import vote_cast
from tests.factories import member, submitted_perturbation

pytestmark = pytest.mark.django_db

# The queue's design (docs/validation.md, "The queue"): one statement for a live lease of the
# validator's, then one transaction (its two bounds) that locks the best candidate and writes
# its lease in a second, fresh statement. The crowd gates add none while they are off.
SERVING = 1 + 2 + 2


@pytest.fixture
def queue(no_controls, people):  # type: ignore[no-untyped-def]
    for _ in range(4):
        submitted_perturbation(no_controls, people["expert"])
    return no_controls


def test_serving_an_item_without_gates_takes_the_statements_it_took_before_them(queue, crowd):
    warm = next_item(project=queue, validator=crowd[0])  # the statements prepared
    vote_cast(project=queue, item_id=warm.pk, validator=crowd[0], label="negative")
    with CaptureQueriesContext(connection) as captured:
        item = next_item(project=queue, validator=crowd[0])
    assert isinstance(item, ValidationItem)
    assert len(captured) == SERVING, [q["sql"][:60] for q in captured.captured_queries]


def test_a_validator_the_gates_stopped_gets_nothing_once_they_are_off(queue, crowd):
    for stopped, reason in ((crowd[1], {"paused": True}), (crowd[2], {"qualification": "failed"})):
        ValidatorStatus.objects.create(project=queue, validator=stopped, **reason)
        assert next_item(project=queue, validator=stopped) is None
    held = next_item(project=queue, validator=crowd[3])
    ValidatorStatus.objects.create(project=queue, validator=crowd[3], paused=True)
    assert held is not None and next_item(project=queue, validator=crowd[3]) is None
    assert next_item(project=queue, validator=member(queue, "fresh", "validator")) is not None
