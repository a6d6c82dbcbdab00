import re

import pytest
from django.test import Client

from annotation.errors import DomainError
from annotation.models import AuditLog, Lease, Perturbation, Vote
from annotation.validation.services.queue import next_item
from annotation.validation.services.votes import vote_cast
from tests.factories import (
    ExampleFactory,
    ProjectFactory,
    member,
    submitted_perturbation,
    vote_all,
)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("votes", "status", "majority"),
    [
        (["negative"] * 5, "accepted", "negative"),
        (["negative"] * 3 + ["positive"] * 2, "accepted", "negative"),
        (["positive"] * 3 + ["negative"] * 2, "disputed", "positive"),
        (["negative", "negative", "positive", "positive", "mixed"], "no_majority", ""),
        (["mixed"] * 3 + ["negative", "positive"], "no_majority", "mixed"),
    ],
    ids=["unanimous", "three of five", "other task label", "no majority", "extra label"],
)
def test_resolution_follows_the_majority(no_controls, people, crowd, votes, status, majority):
    perturbation = submitted_perturbation(no_controls, people["expert"])
    item = vote_all(perturbation.item, crowd, votes[:4])
    assert (
        item.status == "open" and Perturbation.objects.get(pk=perturbation.pk).status == "submitted"
    )
    item = vote_all(item, crowd[4:], votes[4:])
    perturbation.refresh_from_db()
    assert (item.status, perturbation.status, item.majority_label) == ("resolved", status, majority)


def test_vote_api_statuses(no_controls, people, crowd, client_for):
    author_validator = member(no_controls, "erin", "validator")  # erin is also the expert
    item = submitted_perturbation(no_controls, people["expert"]).item
    url = f"/api/projects/{no_controls.slug}/validation/{item.pk}/vote/"
    client = client_for(crowd[0])
    first = client.post(url, {"label": "negative", "flags": ["unclear"]}, format="json")
    assert first.status_code == 201
    again = client.post(url, {"label": "negative", "flags": ["unclear"]}, format="json")
    assert again.status_code == 200
    conflict = client.post(url, {"label": "positive"}, format="json")
    assert conflict.status_code == 409
    own = client_for(author_validator).post(url, {"label": "negative"}, format="json")
    assert own.status_code == 403
    bad = client_for(crowd[1]).post(url, {"label": "meh"}, format="json")
    assert bad.status_code == 400 and "Unknown label 'meh'" in bad.json()["detail"]
    assert Vote.objects.filter(item=item).count() == 1


def test_vote_without_lease_needs_free_capacity(no_controls, people, crowd):
    item = submitted_perturbation(no_controls, people["expert"]).item
    for validator in crowd[:5]:
        assert next_item(project=no_controls, validator=validator) == item

    with pytest.raises(DomainError, match="all the votes it needs") as refused:
        vote_cast(project=item.project, item_id=item.pk, validator=crowd[5], label="negative")
    assert refused.value.status == 409
    vote_all(item, crowd[:5], ["negative"] * 5)
    assert item.status == "resolved" and not Lease.objects.exists()


def test_adjudication_accepts_under_majority_or_rejects(no_controls, people, crowd, client_for):
    disputed = [submitted_perturbation(no_controls, people["expert"]) for _ in range(2)]
    for p in disputed:
        vote_all(p.item, crowd, ["positive"] * 4 + ["negative"])
    admin = client_for(people["admin"])
    base = f"/api/projects/{no_controls.slug}/adjudicate"
    assert (
        admin.post(f"{base}/{disputed[0].pk}/", {"decision": "accept"}).json()["status"]
        == "accepted"
    )
    assert (
        admin.post(f"{base}/{disputed[1].pk}/", {"decision": "reject"}).json()["status"]
        == "rejected"
    )
    assert admin.post(f"{base}/{disputed[1].pk}/", {"decision": "accept"}).status_code == 409
    accepted = Perturbation.objects.get(pk=disputed[0].pk)
    assert (accepted.label, accepted.majority_label) == ("negative", "positive")
    assert AuditLog.objects.filter(action="adjudicated").count() == 2
    expert = client_for(people["expert"])
    assert expert.post(f"{base}/{disputed[0].pk}/", {"decision": "reject"}).status_code == 403


def test_author_sees_the_outcome_only_after_resolution(no_controls, people, crowd, client_for):
    perturbation = submitted_perturbation(no_controls, people["expert"])
    url = f"/api/projects/{no_controls.slug}/perturbations/{perturbation.pk}/"
    vote_all(perturbation.item, crowd, ["negative"] * 4)
    assert client_for(people["expert"]).get(url).json()["outcome"] is None
    vote_all(perturbation.item, crowd[4:], ["positive"])
    outcome = client_for(people["expert"]).get(url).json()["outcome"]
    assert outcome == {"majority_label": "negative", "votes": {"negative": 4, "positive": 1}}


SECRET_TEXT = "ZQX pivot original text"


def test_validators_never_see_intended_label_pivot_or_other_votes(
    project, people, crowd, client_for
):
    from tests.factories import ExampleFactory

    pivot = ExampleFactory(
        project=project, fields={"text": f"{SECRET_TEXT} good"}, label="positive"
    )
    project.settings = {**project.settings, "control_rate": 0}
    project.save()
    # "_" and "-" never occur in CSRF tokens, so the name cannot appear by chance.
    author = member(project, "author_secret-1", "expert")
    perturbation = submitted_perturbation(project, author, pivot=pivot, label="negative")
    perturbation.rationale = "RATIONALE-SECRET"
    perturbation.save()
    vote_all(perturbation.item, crowd[:2], ["mixed", "mixed"])
    viewer = crowd[2]
    api = client_for(viewer)
    responses = [api.get(f"/api/projects/{project.slug}/validation/next/")]
    body = responses[0].json()
    assert set(body) == {"item", "fields", "fields_html", "labels", "extra_labels", "flags"}
    assert body["fields"] == {"text": f"{SECRET_TEXT} bad"}
    page = Client()
    page.force_login(viewer)
    responses.append(page.get(f"/p/{project.slug}/validate/"))
    responses.append(page.get(f"/p/{project.slug}/"))
    responses.append(api.get(f"/api/projects/{project.slug}/"))
    for response in responses:
        text = response.content.decode()
        assert f"{SECRET_TEXT} good" not in text  # the pivot's text
        assert "RATIONALE-SECRET" not in text
        assert "author_secret-1" not in text  # the author
        assert not re.search(r"mixed\W+2|\"votes\"", text)  # other votes
    # The intended label may appear only as one of the choices, never marked as the answer.
    page_text = responses[1].content.decode()
    assert page_text.count('value="negative"') == 1 and "intended" not in page_text.lower()
    for path in ("stats/", "validators/", f"perturbations/{perturbation.pk}/"):
        assert api.get(f"/api/projects/{project.slug}/{path}").status_code == 403


def test_disputes_show_the_pivots_label_and_warn_before_accepting_a_kept_label(
    no_controls, people, crowd
):
    p = submitted_perturbation(no_controls, people["expert"])  # pivot positive, meant negative
    vote_all(p.item, crowd[:5], ["positive"] * 4 + ["negative"])
    page = Client()
    page.force_login(people["admin"])
    html = page.get(f"/p/{no_controls.slug}/disputes/").content.decode()
    assert "Pivot&#x27;s label" in html or "Pivot's label" in html
    assert "same as the pivot" in html and "data-confirm=" in html


def test_a_validator_undoes_a_vote_only_while_its_item_is_open(
    no_controls, people, crowd, client_for
):
    item = submitted_perturbation(no_controls, people["expert"]).item
    api = client_for(crowd[0])
    url = f"/api/projects/{no_controls.slug}/validation/{item.pk}/vote/"
    assert api.post(url, {"label": "negative"}, format="json").status_code == 201
    assert api.delete(url).status_code == 204
    item.refresh_from_db()
    assert item.counted_votes == 0 and not Vote.objects.filter(item=item).exists()
    assert api.delete(url).status_code == 409  # nothing left to take back
    page = Client()
    page.force_login(crowd[0])
    shown = page.get(f"/p/{no_controls.slug}/validate/").content.decode()
    assert 'id="items-left">1<' in shown and 'id="undo-form" class="inline" hidden' in shown
    vote_all(item, crowd[:5], ["negative"] * 5)  # resolved now
    assert api.delete(url).status_code == 409
    assert Vote.objects.filter(item=item).count() == 5


def test_the_vote_response_carries_the_next_item(no_controls, people, crowd, client_for):
    """One round trip per vote: the response leases and shows the next item, exactly what
    GET next would show, and null once nothing is left."""
    items = [submitted_perturbation(no_controls, people["expert"]).item for _ in range(2)]
    api = client_for(crowd[0])
    base = f"/api/projects/{no_controls.slug}/validation"
    first = api.get(f"{base}/next/").json()
    voted = api.post(f"{base}/{first['item']}/vote/", {"label": "negative"}, format="json")
    assert voted.status_code == 201
    body = voted.json()
    assert body["vote"] == {"item": first["item"], "label": "negative", "answer": "",
                            "flags": []}  # fmt: skip
    assert body["next"]["item"] == ({i.pk for i in items} - {first["item"]}).pop()
    assert api.get(f"{base}/next/").json() == body["next"]  # leased: the same item again
    assert set(body["next"]) == {"item", "fields", "fields_html", "labels", "extra_labels", "flags"}
    last = api.post(f"{base}/{body['next']['item']}/vote/", {"label": "positive"}, format="json")
    assert last.json()["next"] is None
    again = api.post(f"{base}/{first['item']}/vote/", {"label": "negative"}, format="json")
    assert again.status_code == 200 and again.json()["next"] is None


def test_a_vote_on_another_projects_item_is_not_found(no_controls, people, crowd, client_for):
    """The item id in the address must belong to the project in it: a validator of one project
    cannot vote, through it, on an item of a project they may not see."""
    other = ProjectFactory(settings={"control_rate": 0})
    member(other, people["expert"].username, "expert")
    foreign = submitted_perturbation(other, people["expert"]).item
    response = client_for(crowd[0]).post(
        f"/api/projects/{no_controls.slug}/validation/{foreign.pk}/vote/",
        {"label": "negative"},
        format="json",
    )
    assert response.status_code == 404
    assert response.json()["detail"] == "No such item in this project."
    assert not Vote.objects.filter(item=foreign).exists()


def test_after_an_undo_the_same_item_comes_back(no_controls, people, crowd, client_for):
    """The vote's answer leased the next item; taking the vote back shows the undone item
    again, not that next one."""
    for _ in range(3):
        submitted_perturbation(no_controls, people["expert"])
    api = client_for(crowd[0])
    base = f"/api/projects/{no_controls.slug}/validation"
    first = api.get(f"{base}/next/").json()["item"]
    voted = api.post(f"{base}/{first}/vote/", {"label": "negative"}, format="json").json()
    assert voted["next"]["item"] != first
    assert api.delete(f"{base}/{first}/vote/").status_code == 204
    assert api.get(f"{base}/next/").json()["item"] == first
    page = Client()
    page.force_login(crowd[0])
    again = page.post(f"/p/{no_controls.slug}/validate/{first}/vote/", {"label": "negative"})
    assert again.status_code == 302
    assert page.post(f"/p/{no_controls.slug}/validate/{first}/undo/").status_code == 302
    shown = page.get(f"/p/{no_controls.slug}/validate/").content.decode()
    assert f'data-item="{first}"' in shown


def test_a_dispute_names_the_majority_label_it_accepts(no_controls, people, crowd):
    """positive 3, negative 2 on an edit meant negative: the majority is positive, and the
    button says so (it read "(none yet)" where a label project has no majority answers)."""
    p = submitted_perturbation(no_controls, people["expert"])  # meant negative
    vote_all(p.item, crowd[:5], ["positive"] * 3 + ["negative"] * 2)
    page = Client()
    page.force_login(people["admin"])
    html = page.get(f"/p/{no_controls.slug}/disputes/").content.decode()
    assert "(none yet)" not in html
    assert "<b>positive</b>" in html and "Accept as positive" in html


def test_the_validate_page_says_why_items_left_are_not_offered(no_controls, people, crowd):
    """ "1 left for you" never stands beside "Nothing left": the page says which items are
    left and why the queue holds them back (skipped, or of a pivot just labelled)."""
    pivot = ExampleFactory(project=no_controls, label="positive", fields={"text": "a good film"})
    first = submitted_perturbation(no_controls, people["expert"], pivot=pivot)
    submitted_perturbation(no_controls, people["expert"], pivot=pivot, text="a dull film")
    vote_all(first.item, crowd[:1], ["negative"])  # the sibling is now held back from val0
    page = Client()
    page.force_login(crowd[0])
    url = f"/p/{no_controls.slug}/validate/"
    html = page.get(url).content.decode()
    assert 'id="items-left">1<' in html and 'id="vote-form"' not in html
    assert "Nothing left for you" not in html
    assert "1 is of a pivot whose edit you labelled" in html

    other = submitted_perturbation(no_controls, people["expert"])  # unrelated: offered
    html = page.get(url).content.decode()
    assert f'data-item="{other.item.pk}"' in html
    page.post(f"/p/{no_controls.slug}/validate/skip/{other.item.pk}/")
    html = page.get(url).content.decode()
    assert 'id="items-left">2<' in html and "1 you skipped in this session" in html
    page.post(f"/p/{no_controls.slug}/validate/unskip/")
    assert f'data-item="{other.item.pk}"' in page.get(url).content.decode()
