"""What an admin does with an item no response won (issue 11): reopen it for more votes, or
reject it. No vote is ever dropped, and the agreement counters follow the item."""

import pytest
from django.test import Client

from annotation.models import AuditLog, Perturbation, ValidatorStatus, Vote
from annotation.validation.services.queue import next_item
from tests.factories import submitted_perturbation, vote_all

pytestmark = pytest.mark.django_db

SPLIT = ["negative", "negative", "positive", "positive", "mixed"]


def counters(project, validators):  # type: ignore[no-untyped-def]
    rows = ValidatorStatus.objects.filter(project=project, validator__in=validators)
    found = {s.validator_id: (s.resolved_votes, s.agreed_votes) for s in rows}
    return [found.get(v.pk, (0, 0)) for v in validators]


# The voters' counts are taken once the vote commits (transaction.on_commit).
@pytest.mark.django_db(transaction=True)
def test_reopened_item_takes_two_more_votes_and_needs_four_of_seven(
    no_controls, people, crowd, client_for
):
    perturbation = submitted_perturbation(no_controls, people["expert"])  # intended: negative
    item = vote_all(perturbation.item, crowd, SPLIT)
    assert Perturbation.objects.get(pk=perturbation.pk).status == "no_majority"
    assert counters(no_controls, crowd[:5]) == [(1, 0)] * 5  # nobody agreed with no majority

    url = f"/api/projects/{no_controls.slug}/adjudicate/{perturbation.pk}/"
    admin = client_for(people["admin"])
    response = admin.post(url, {"decision": "reopen"}, format="json")
    assert response.status_code == 200 and response.json()["status"] == "submitted"
    item.refresh_from_db()
    assert (item.status, item.extra_votes, item.counted_votes) == ("open", 2, 5)
    assert counters(no_controls, crowd[:5]) == [(0, 0)] * 5  # out until it resolves again
    assert Vote.objects.filter(item=item).count() == 5  # every vote stays

    # Earlier voters never see it again; a new validator does.
    assert next_item(project=no_controls, validator=crowd[0]) is None
    assert next_item(project=no_controls, validator=crowd[5]) == item
    item = vote_all(item, crowd[5:6], ["negative"])  # 3 of 6: not resolved yet
    assert item.status == "open"
    item = vote_all(item, crowd[6:7], ["negative"])  # 4 of 7
    perturbation.refresh_from_db()
    assert (item.status, item.majority_label, perturbation.status) == (
        "resolved",
        "negative",
        "accepted",
    )
    agreed = [1, 1, 0, 0, 0, 1, 1]
    assert counters(no_controls, crowd[:7]) == [(1, a) for a in agreed]
    assert AuditLog.objects.filter(action="adjudicated", details__decision="reopen").count() == 1


# The voters' counts are taken once the vote commits (transaction.on_commit).
@pytest.mark.django_db(transaction=True)
def test_three_of_seven_is_still_no_majority(no_controls, people, crowd, client_for):
    perturbation = submitted_perturbation(no_controls, people["expert"])
    vote_all(perturbation.item, crowd, SPLIT)
    url = f"/api/projects/{no_controls.slug}/adjudicate/{perturbation.pk}/"
    assert client_for(people["admin"]).post(url, {"decision": "reopen"}).status_code == 200
    vote_all(perturbation.item, crowd[5:7], ["positive", "mixed"])
    perturbation.refresh_from_db()
    assert perturbation.status == "no_majority"  # positive 3, negative 2, mixed 2


def test_decisions_that_do_not_fit_the_status_are_refused(no_controls, people, crowd, client_for):
    undecided = submitted_perturbation(no_controls, people["expert"])
    vote_all(undecided.item, crowd, SPLIT)
    accepted = submitted_perturbation(no_controls, people["expert"])
    vote_all(accepted.item, crowd, ["negative"] * 5)
    base = f"/api/projects/{no_controls.slug}/adjudicate"
    admin = client_for(people["admin"])
    refused = admin.post(f"{base}/{undecided.pk}/", {"decision": "accept"})
    assert refused.status_code == 400 and "reopen or reject" in refused.json()["detail"]
    assert admin.post(f"{base}/{accepted.pk}/", {"decision": "reopen"}).status_code == 409
    validator = client_for(crowd[0])
    assert validator.post(f"{base}/{undecided.pk}/", {"decision": "reject"}).status_code == 403
    rejected = admin.post(f"{base}/{undecided.pk}/", {"decision": "reject"})
    assert rejected.json()["status"] == "rejected"
    assert Vote.objects.filter(item=undecided.item).count() == 5


# The voters' counts are taken once the vote commits (transaction.on_commit).
@pytest.mark.django_db(transaction=True)
def test_disputes_page_lists_no_majority_items_with_their_actions(no_controls, people, crowd):
    perturbation = submitted_perturbation(no_controls, people["expert"])
    vote_all(perturbation.item, crowd, SPLIT)
    page = Client()
    page.force_login(people["admin"])
    url = f"/p/{no_controls.slug}/disputes/"
    html = page.get(url).content.decode()
    table = html[html.index('id="no-majority"') :]
    assert f'<td data-label="#">{perturbation.pk}</td>' in table
    assert "negative 2, positive 2, mixed 1" in table and "Reopen for 2 more votes" in table
    done = page.post(f"{url}{perturbation.pk}/", {"decision": "reopen"}, follow=True)
    assert "reopened for more votes" in done.content.decode()
    assert Perturbation.objects.get(pk=perturbation.pk).status == "submitted"
