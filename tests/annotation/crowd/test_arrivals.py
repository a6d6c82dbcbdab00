"""Who a study link lets in (issue 58, items 6 and 7): its refusals are pages a participant
understands, never 500s; new participants are limited per client address and per study, and
a study may cap how many it takes."""

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client

from annotation.models import Participant, Study
from tests.annotation.crowd.test_studies import PID, arrive, study  # noqa: F401  # a fixture

pytestmark = pytest.mark.django_db


def test_an_id_whose_account_name_is_taken_gets_a_page_not_a_500(study):  # noqa: F811
    """An account named as the participant's would be (made before the namespace was
    reserved) made participant_arrive refuse, and the page let the refusal out: 500."""
    get_user_model().objects.create_user(username=f"PROLIFIC-{study.project_id}-{PID}")
    answer = arrive(Client(), study)
    assert answer.status_code == 409
    page = answer.content.decode()
    assert 'role="alert"' in page and "cannot open an account for your participant id" in page
    assert not Participant.objects.exists()


@pytest.fixture
def fresh_counts():  # type: ignore[no-untyped-def]
    cache.clear()
    yield
    cache.clear()


def from_address(address: str) -> Client:
    return Client(REMOTE_ADDR=address)


def test_new_participants_from_one_address_are_limited_per_hour(
    study,  # noqa: F811
    settings,
    fresh_counts,
):
    """2,000 study-link visits with made-up PROLIFIC_PIDs made 2,000 validator accounts: now
    the address's fourth new participant in the hour reads a page that says to wait (429)."""
    settings.STUDY_NEW_PARTICIPANTS_PER_ADDRESS_HOUR = 3
    for n in range(3):
        assert arrive(from_address("203.0.113.7"), study, pid=f"pid{n}").status_code == 302
    refused = arrive(from_address("203.0.113.7"), study, pid="pid3")
    assert refused.status_code == 429
    assert "wait an hour" in refused.content.decode()
    assert Participant.objects.count() == 3
    # One who comes back is not new, and another address has its own count.
    assert arrive(from_address("203.0.113.7"), study, pid="pid0").status_code == 302
    assert arrive(from_address("198.51.100.2"), study, pid="pid3").status_code == 302
    assert Participant.objects.count() == 4


def test_new_participants_of_one_study_are_limited_per_minute(
    study,  # noqa: F811
    settings,
    fresh_counts,
):
    settings.STUDY_NEW_PARTICIPANTS_PER_STUDY_MINUTE = 2
    answers = [
        arrive(from_address(f"192.0.2.{n}"), study, pid=f"pid{n}").status_code for n in range(3)
    ]
    assert answers == [302, 302, 429]
    assert Participant.objects.count() == 2


def test_a_study_with_a_cap_says_it_is_full_past_it(
    crowd_project, people, client_for, fresh_counts
):
    """The cap is set where studies are made, on the API and the Studies page; past it, the
    link answers a page that says the study is full and to return it (409)."""
    api = client_for(people["admin"])
    body = {"name": "Capped", "platform": "prolific", "max_participants": 2}
    made = api.post(f"/api/projects/{crowd_project.slug}/studies/", body, format="json")
    assert made.status_code == 201 and made.json()["max_participants"] == 2
    capped = Study.objects.get(pk=made.json()["id"])
    assert [arrive(Client(), capped, pid=f"pid{n}").status_code for n in range(3)] == [
        302,
        302,
        409,
    ]
    page = arrive(Client(), capped, pid="pid9").content.decode()
    assert "all the participants it takes" in page and "return it on your platform" in page
    assert capped.participants.count() == 2
    assert arrive(Client(), capped, pid="pid1").status_code == 302  # they come back
    bad = api.post(
        f"/api/projects/{crowd_project.slug}/studies/",
        {**body, "max_participants": 0},
        format="json",
    )
    assert bad.status_code == 400
    admin = Client()
    admin.force_login(people["admin"])
    form = {"name": "Paged", "platform": "mturk", "max_participants": "5"}
    assert admin.post(f"/p/{crowd_project.slug}/studies/", form).status_code == 302
    assert Study.objects.get(name="Paged").max_participants == 5
    assert (
        "at most 5 participants" in admin.get(f"/p/{crowd_project.slug}/studies/").content.decode()
    )
