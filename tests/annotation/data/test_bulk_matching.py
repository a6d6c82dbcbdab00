"""Bulk actions on every row that matches the Data page's filters, not only the page's ticked
rows (issue 47): the page offers "all N that match", the action reads the filters in its own
transaction with its audit entry, and a delete goes ahead only for the count confirmed."""

import csv
import io

import pytest
from django.test import Client

from annotation.models import AuditLog, Perturbation
from tests.factories import member, submitted_perturbation

pytestmark = pytest.mark.django_db


@pytest.fixture
def written(project, people):  # type: ignore[no-untyped-def]
    """55 edits by erin (more than one page of 50) and 5 by another expert."""
    other = member(project, "otto", "expert")
    mine = [submitted_perturbation(project, people["expert"]) for _ in range(55)]
    theirs = [submitted_perturbation(project, other) for _ in range(5)]
    return mine, theirs


def page_for(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def test_the_page_tags_every_row_that_matches_in_one_audited_action(project, people, written):
    mine, theirs = written
    page = page_for(people["admin"])
    html = page.get(f"/p/{project.slug}/data/?author=erin").content.decode()
    assert html.count('name="ids"') == 50  # one page
    assert 'id="matching-count">55<' in html and 'name="filters" value="author=erin"' in html
    response = page.post(
        f"/p/{project.slug}/data/bulk/",
        {"action": "tag", "tag": "intensity", "scope": "matching", "filters": "author=erin",
         "kind": "perturbations", "ids": [mine[-1].pk]},
    )  # fmt: skip
    assert response.status_code == 302
    tagged = set(Perturbation.objects.filter(tags__name="intensity").values_list("pk", flat=True))
    assert tagged == {p.pk for p in mine}  # all 55, none of otto's
    entry = AuditLog.objects.get(action="bulk_tag")
    assert entry.details["filters"] == {"author": "erin"} and entry.details["done"] == 55
    assert sorted(entry.details["ids"]) == sorted(p.pk for p in mine)

    exported = page.post(
        f"/p/{project.slug}/data/bulk/",
        {"action": "export", "format": "csv", "scope": "matching", "filters": "author=otto"},
    )
    rows = list(csv.DictReader(io.StringIO(b"".join(exported.streaming_content).decode())))
    assert sorted(int(r["id"]) for r in rows) == sorted(p.pk for p in theirs)


def test_a_delete_of_every_match_deletes_the_count_confirmed_or_nothing(project, people, written):
    page = page_for(people["admin"])
    url = f"/p/{project.slug}/data/bulk/"
    ask = {"action": "delete", "scope": "matching", "filters": "author=erin"}
    confirm = page.post(url, ask).content.decode()
    assert "all 55 perturbations that match" in confirm
    assert 'name="expected" value="55"' in confirm and 'id="plan-perturbations">55<' in confirm
    assert Perturbation.objects.count() == 60  # asking deleted nothing

    submitted_perturbation(project, people["expert"])  # a 56th matches meanwhile
    stale = page.post(url, {**ask, "confirmed": "1", "expected": "55"}, follow=True)
    assert "56 rows match these filters now, not 55" in stale.content.decode()
    assert Perturbation.objects.count() == 61
    page.post(url, {**ask, "confirmed": "1", "expected": "56"})
    assert list(Perturbation.objects.values_list("author__username", flat=True)) == ["otto"] * 5
    entry = AuditLog.objects.get(action="items_deleted")
    assert entry.details["perturbations"] == 56 and entry.details["filters"] == {"author": "erin"}


def test_the_api_acts_on_filters_and_wants_the_count_for_a_delete(
    project, people, written, client_for
):
    _, theirs = written
    api = client_for(people["admin"])
    url = f"/api/projects/{project.slug}/items/bulk/"
    both = api.post(url, {"action": "tag", "tag": "intensity", "ids": [theirs[0].pk],
                          "filters": {"author": "otto"}}, format="json")  # fmt: skip
    assert both.status_code == 400
    bad = api.post(url, {"action": "tag", "tag": "intensity", "filters": {"status": "nope"}},
                   format="json")  # fmt: skip
    assert bad.status_code == 400 and bad.json()["field"] == "status"
    tagged = api.post(url, {"action": "tag", "tag": "intensity", "filters": {"author": "otto"}},
                      format="json")  # fmt: skip
    assert tagged.status_code == 200 and tagged.json()["done"] == 5
    delete = {"action": "delete", "filters": {"author": "otto", "tag": "intensity"}}
    unsaid = api.post(url, delete, format="json")
    assert unsaid.status_code == 400 and "expected=5" in unsaid.json()["detail"]
    assert api.post(url, {**delete, "expected": 4}, format="json").status_code == 409
    done = api.post(url, {**delete, "expected": 5}, format="json")
    assert done.status_code == 200 and done.json()["done"] == 5
    assert not Perturbation.objects.filter(author__username="otto").exists()


def test_the_delete_confirmation_reads_well_and_focuses_cancel(project, people):
    """The walk of issue 47: "Remove all 1 perturbation that match?", the filters as a raw
    query string, and Delete focused (Enter deleted). One match reads in the singular, the
    filters name each one, and Cancel has the focus."""
    submitted_perturbation(project, people["expert"])
    page = page_for(people["admin"])
    ask = {"action": "delete", "scope": "matching", "filters": "status=submitted&author=erin"}
    confirm = page.post(f"/p/{project.slug}/data/bulk/", ask).content.decode()
    assert "Remove the 1 perturbation that matches?" in confirm and "all 1 " not in confirm
    said = confirm.split('id="plan-matching"')[1].split("</p>")[0]
    assert "status=submitted" not in said  # not a raw query string
    assert "<b>status</b>: “submitted”, <b>author</b>: “erin”" in confirm
    delete = confirm.split('id="confirm-removal"')[1].split(">")[0]
    assert "autofocus" not in delete
    assert ">Cancel</a>" in confirm and "autofocus>Cancel</a>" in confirm
