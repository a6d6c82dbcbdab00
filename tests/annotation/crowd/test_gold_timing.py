"""Gold items are served like real ones, timing included (issue 49, item 2): serving or answering
a gold item runs the same statements as a real item, as many and of the same kinds, in the page
and in the API, gates on. (The timing itself is measured by benchmarks/crowd.py.)"""

import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from annotation.models import GoldItem, ValidationItem
from tests.annotation.crowd.conftest import configure

pytestmark = pytest.mark.django_db
GOLD, REAL = 1.0, 1e-9  # gold_rate: every item served is gold; the gates on, no gold drawn


def statements(send: Any, *args: Any) -> tuple[list[str], Any]:
    """The kind of each SQL statement `send(*args)` runs (its first word: SELECT, EXECUTE of a
    prepared statement, SAVEPOINT ...), and its response."""
    with CaptureQueriesContext(connection) as captured:
        result = send(*args)
    return [q["sql"].split()[0] for q in captured.captured_queries], result


def page_item(response: Any) -> int:
    return int(re.search(r'data-item="(\d+)"', response.content.decode()).group(1))  # type: ignore[union-attr]


def kind(item_id: int) -> str:
    if GoldItem.objects.filter(pk=item_id).exists():
        return "gold"
    assert ValidationItem.objects.filter(pk=item_id).exists()
    return "real"


@pytest.fixture
def clients(crowd_project, workers):  # type: ignore[no-untyped-def]
    """Four validators with the same past: one gold and one real item answered through the page
    (their statements prepared, their status made); no item is resolved by a vote here."""
    configure(crowd_project, votes_per_item=20, majority=11, gold_min_count=50)
    out = []
    for worker in workers[:4]:
        page = Client()
        page.force_login(worker)
        for rate in (GOLD, REAL):
            configure(crowd_project, gold_rate=rate)
            item = page_item(page.get(f"/p/{crowd_project.slug}/validate/"))
            assert kind(item) == ("gold" if rate == GOLD else "real")
            page.post(f"/p/{crowd_project.slug}/validate/{item}/vote/", {"label": "positive"})
        api = APIClient()
        api.force_authenticate(worker)
        out.append((page, api))
    return out


def test_a_gold_and_a_real_item_take_the_same_statements_in_the_page(crowd_project, clients):
    slug = crowd_project.slug
    served, answered = {}, {}
    for (page, _), rate in zip(clients[:2], (GOLD, REAL), strict=True):
        configure(crowd_project, gold_rate=rate)
        served[rate], response = statements(page.get, f"/p/{slug}/validate/")
        item = page_item(response)
        assert kind(item) == ("gold" if rate == GOLD else "real")
        url = f"/p/{slug}/validate/{item}/vote/"
        answered[rate], response = statements(page.post, url, {"label": "positive"})
        assert response.status_code == 302
    assert served[GOLD] == served[REAL]
    assert answered[GOLD] == answered[REAL]
    assert len(served[GOLD]) >= 6 and len(answered[GOLD]) >= 6  # the statements were captured


def test_a_gold_and_a_real_item_take_the_same_statements_in_the_api(crowd_project, clients):
    base = f"/api/projects/{crowd_project.slug}/validation"
    served, answered = {}, {}
    for (_, api), rate in zip(clients[2:], (GOLD, REAL), strict=True):
        configure(crowd_project, gold_rate=rate)
        served[rate], response = statements(api.get, f"{base}/next/")
        item = response.json()["item"]
        assert kind(item) == ("gold" if rate == GOLD else "real")
        # The vote's answer carries the next item: a gold one after gold, a real one after real.
        url = f"{base}/{item}/vote/"
        answered[rate], response = statements(api.post, url, {"label": "positive"})
        assert response.status_code == 201
        assert kind(response.json()["next"]["item"]) == kind(item)
    assert served[GOLD] == served[REAL]
    assert answered[GOLD] == answered[REAL]
