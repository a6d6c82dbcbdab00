"""Issue 48, item 7: an expert's Data page and API count only the expert's own work, whatever
the filters; ids that are digits but not numbers (²) are refused, never a 500."""

import pytest
from django.test import Client

from annotation.formfields import AgreementField
from annotation.models import Example, Perturbation
from annotation.pagination import _natural
from tests.factories import ExampleFactory, member, submitted_perturbation

pytestmark = pytest.mark.django_db


@pytest.fixture
def shared_original(project, people):  # type: ignore[no-untyped-def]
    """One original that erin (the expert) perturbed once, and otto three times: a draft, and
    two submitted with a tag erin never used."""
    otto = member(project, "otto", "expert")
    text = "the film was good and the plot was long"
    pivot = ExampleFactory(
        project=project, external_id="shared", label="positive", fields={"text": text}
    )
    submitted_perturbation(project, people["expert"], pivot=pivot, text=text.replace("good", "bad"))
    for n in range(3):
        p = submitted_perturbation(
            project, otto, pivot=pivot, text=text.replace("good", "bad" * (n + 2)), tag="intensity"
        )
        if n == 0:
            Perturbation.objects.filter(pk=p.pk).update(status="draft")
    return pivot


def listed(client, project, query: str):  # type: ignore[no-untyped-def]
    answer = client.get(f"/api/projects/{project.slug}/items/?{query}")
    return answer.status_code, answer.json()


def test_an_expert_counts_only_their_own_work_under_an_original(
    project, people, client_for, shared_original
):
    erin = client_for(people["expert"])
    for query in ("kind=originals&status=draft", "kind=originals&tag=intensity"):
        status, body = listed(erin, project, query)
        assert (status, body["count"], body["results"]) == (200, 0, []), query
    status, body = listed(erin, project, "kind=originals")
    assert [row["perturbations"] for row in body["results"]] == [1]
    url = f"/api/projects/{project.slug}/items/{shared_original.pk}/?kind=originals"
    assert erin.get(url).json()["record"]["perturbations"] == 1
    page = Client()
    page.force_login(people["expert"])
    html = page.get(f"/p/{project.slug}/data/originals/{shared_original.pk}/").content.decode()
    assert "otto" not in html
    admin = client_for(people["admin"])
    assert listed(admin, project, "kind=originals&status=draft")[1]["count"] == 1
    assert listed(admin, project, "kind=originals")[1]["results"][0]["perturbations"] == 4


@pytest.mark.parametrize("kind", ["perturbations", "originals"])
def test_the_author_filter_answers_an_expert_alike_for_every_other_name(
    project, people, client_for, shared_original, kind
):
    erin = client_for(people["expert"])
    answers = {
        name: listed(erin, project, f"kind={kind}&author={name}") for name in ("otto", "nobody")
    }
    assert answers["otto"][0] == answers["nobody"][0] == 400
    assert answers["otto"][1] == {**answers["nobody"][1], "detail": answers["otto"][1]["detail"]}
    assert answers["otto"][1]["detail"] == answers["nobody"][1]["detail"].replace("nobody", "otto")
    status, body = listed(erin, project, f"kind={kind}&author={people['expert'].username}")
    assert status == 200 and body["count"] == 1
    assert listed(client_for(people["admin"]), project, f"kind={kind}&author=otto")[0] == 200


@pytest.mark.parametrize("ids", [["²"], ["1²"], ["٣"], ["²", "³"]])
def test_bulk_ids_that_are_digits_but_not_numbers_are_refused(project, people, ids):
    """ "²".isdigit() is true and int("²") fails: the page answered 500."""
    original = ExampleFactory(project=project)
    page = Client()
    page.force_login(people["admin"])
    for action in ("export", "delete"):
        answer = page.post(
            f"/p/{project.slug}/data/bulk/", {"action": action, "kind": "originals", "ids": ids}
        )
        assert answer.status_code == 302, (action, answer.status_code)
    assert Example.objects.filter(pk=original.pk).exists()


def test_digits_that_are_not_numbers_neither_sort_nor_count_as_numbers():
    assert _natural("²") == [(1, 0, "²")]
    with pytest.raises(Exception, match="number of votes"):
        AgreementField().clean("²")
