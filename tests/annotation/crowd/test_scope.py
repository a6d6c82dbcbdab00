"""A participant's account reaches their project's validation alone (docs/security.md), and
gold items look like any item in the page and the API."""

import re

import pytest
from django.test import Client

from annotation.crowd.services import studies
from annotation.models import GoldItem, ValidationItem
from tests.annotation.crowd.conftest import configure
from tests.factories import member

pytestmark = pytest.mark.django_db


@pytest.fixture
def participant_client(crowd_project, people):  # type: ignore[no-untyped-def]
    study = studies.study_create(project=crowd_project, actor=people["admin"], name="S",
                                 platform="prolific", items_per_participant=3)  # fmt: skip
    client = Client()
    client.get(f"/p/{crowd_project.slug}/study/{study.token}/",
               {"PROLIFIC_PID": "abc123", "STUDY_ID": "s", "SESSION_ID": "t"})  # fmt: skip
    client.study = study  # type: ignore[attr-defined]
    return client


def test_a_participant_reaches_their_validation_pages_alone(participant_client, crowd_project):
    slug = crowd_project.slug
    allowed = [f"/p/{slug}/validate/", f"/api/projects/{slug}/validation/next/"]
    for url in allowed:
        assert participant_client.get(url).status_code in (200, 204), url
    refused = [
        "/", "/projects/new/", f"/p/{slug}/", f"/p/{slug}/settings/", f"/p/{slug}/validators/",
        f"/p/{slug}/data/", f"/p/{slug}/pivots/", f"/p/{slug}/studies/", f"/p/{slug}/releases/",
        f"/p/{slug}/members/", f"/p/{slug}/audit/", f"/p/{slug}/runs/", "/p/elsewhere/validate/",
        "/p/elsewhere/", "/api/projects/", f"/api/projects/{slug}/", f"/api/projects/{slug}/stats/",
        "/api/projects/elsewhere/validation/next/", "/admin/", "/api/docs/", "/api/schema/",
        "/accounts/login/",
    ]  # fmt: skip
    for url in refused:
        assert participant_client.get(url).status_code == 404, url
    token = participant_client.post("/api/auth/token/", {"username": "prolific-x", "password": ""})
    assert token.status_code == 404
    page = participant_client.get(f"/p/{slug}/validate/").content.decode()
    # No link to any page the account may not open: its study's page, and static files.
    links = set(re.findall(r'href="(/[^"]*)"', page))
    study_page = f"/p/{slug}/study/{participant_client.study.token}/"  # type: ignore[attr-defined]
    assert links - {u for u in links if u.startswith("/static/")} == {study_page}


def test_a_participant_of_one_project_cannot_open_anothers_study(participant_client, people):
    other = people["outsider"].memberships.first().project
    assert participant_client.get(f"/p/{other.slug}/validate/").status_code == 404
    assert participant_client.get(f"/api/projects/{other.slug}/validation/next/").status_code == 404


def _page_without(html: str, item: object) -> str:
    """The Validate page with what varies by item taken out: its id, its text, the token."""
    html = html.replace(str(item.pk), "ID")  # type: ignore[attr-defined]
    for value in item.fields.values():  # type: ignore[attr-defined]
        html = html.replace(value, "TEXT")
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", html)
    return re.sub(r'"X-CSRFToken": "[^"]+"', "", html)


def test_gold_and_real_items_look_the_same_in_the_page_and_the_api(crowd_project, workers):
    configure(crowd_project, gold_rate=1.0, gold_min_count=50)
    gold_client, real_client = Client(), Client()
    gold_client.force_login(workers[0])
    gold_page = gold_client.get(f"/p/{crowd_project.slug}/validate/").content.decode()
    gold = GoldItem.objects.get(pk=int(gold_page.split('data-item="')[1].split('"')[0]))
    configure(crowd_project, gold_rate=0.0)
    configure(crowd_project, gold_rate=1e-9)  # gates on, no gold drawn: a real item
    real_client.force_login(workers[1])
    real_page = real_client.get(f"/p/{crowd_project.slug}/validate/").content.decode()
    real = ValidationItem.objects.get(pk=int(real_page.split('data-item="')[1].split('"')[0]))
    assert _page_without(gold_page, gold).replace("worker0", "W") == _page_without(
        real_page, real
    ).replace("worker1", "W")
    for item in (gold, real):
        assert 2**32 <= item.pk < 2**53  # ids from the same range
    # The API: same keys, same shapes, same vote answer, same refusal of an undo.
    configure(crowd_project, gold_rate=1.0)
    api_gold = gold_client.get(f"/api/projects/{crowd_project.slug}/validation/next/").json()
    configure(crowd_project, gold_rate=1e-9)
    api_real = real_client.get(f"/api/projects/{crowd_project.slug}/validation/next/").json()
    assert (api_gold["item"], api_real["item"]) == (gold.pk, real.pk)
    assert {k: v for k, v in api_gold.items() if k not in ("item", "fields", "fields_html")} == {
        k: v for k, v in api_real.items() if k not in ("item", "fields", "fields_html")
    }
    answers = []
    for client, item in ((gold_client, gold), (real_client, real)):
        url = f"/api/projects/{crowd_project.slug}/validation/{item.pk}/vote/"
        vote = client.post(url, {"label": "positive"}, content_type="application/json")
        again = client.post(url, {"label": "positive"}, content_type="application/json")
        undo = client.delete(url)
        answers.append((vote.status_code, sorted(vote.json()), vote.json()["vote"]["label"],
                        again.status_code, undo.status_code, undo.json()))  # fmt: skip
    assert answers[0] == answers[1]
    assert answers[0][:2] == (201, ["done", "next", "vote"]) and answers[0][3:5] == (200, 409)


def test_a_validators_counter_moves_alike_for_gold_and_real(crowd_project, workers):
    configure(crowd_project, gold_rate=1.0, gold_min_count=50)
    client = Client()
    client.force_login(workers[0])
    counts = []
    for rate in (1.0, 1e-9):
        configure(crowd_project, gold_rate=rate)
        page = client.get(f"/p/{crowd_project.slug}/validate/").content.decode()
        item_id = int(page.split('data-item="')[1].split('"')[0])
        client.post(f"/p/{crowd_project.slug}/validate/{item_id}/vote/", {"label": "negative"})
        after = client.get(f"/p/{crowd_project.slug}/validate/").content.decode()
        counts.append(re.search(r'id="done-count">(\d+)<', after).group(1))  # type: ignore[union-attr]
        assert 'id="items-left"' not in after and 'id="undo-form"' not in after
    assert counts == ["1", "2"]
    assert member(crowd_project, "x", "validator")
