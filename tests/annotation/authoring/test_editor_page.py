"""The editor and the pivot browser as an expert reads them: a read-only field once, no label
keys without labels, the pivot's perturbations so far, and no claim offered on a full pivot."""

import re

import pytest
from django.test import Client

from annotation.authoring.services.claims import pivot_claim
from annotation.models import Example
from tests.annotation.test_free_text import qa  # noqa: F401  # the fixture
from tests.factories import ExampleFactory, member, submitted_perturbation

pytestmark = pytest.mark.django_db


def page_of(user, url: str) -> str:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_a_read_only_field_shows_once_and_free_text_has_no_label_keys(qa):  # noqa: F811
    project, people = qa
    pivot = Example.objects.get(project=project, external_id="q1")
    pivot_claim(pivot=pivot, expert=people["expert"])
    html = page_of(people["expert"], f"/p/{project.slug}/pivots/{pivot.pk}/edit/")
    shown = re.sub(r"<script[^>]*application/json.*?</script>", "", html, flags=re.S)
    assert shown.count(pivot.fields["context"][:60]) == 1
    assert "pick a label" not in html and "letters toggle tags" in html


def test_the_editor_lists_the_pivots_perturbations_so_far(project, people):
    pivot = ExampleFactory(project=project, fields={"text": "The film was good."})
    other = member(project, "otto", "expert")
    submitted_perturbation(project, other, pivot=pivot, text="The film was bad.")
    pivot_claim(pivot=pivot, expert=people["expert"])
    html = page_of(people["expert"], f"/p/{project.slug}/pivots/{pivot.pk}/edit/")
    existing = html[html.index('id="existing"') :]
    assert "The film was <del>good</del><ins>bad</ins>." in existing
    assert "otto" in existing and "1 of at most 5" in existing


def test_a_full_pivot_offers_no_claim(project, people):
    project.settings["max_perturbations_per_pivot"] = 1
    project.save()
    full = ExampleFactory(project=project, external_id="full")
    open_ = ExampleFactory(project=project, external_id="open")
    submitted_perturbation(project, member(project, "otto", "expert"), pivot=full)
    html = page_of(people["expert"], f"/p/{project.slug}/pivots/")
    rows = {row.split("<code>")[1].split("</code>")[0]: row for row in html.split("<tr>")[2:]}
    assert "full" in rows["full"] and "Claim &amp; edit" not in rows["full"]
    assert "Claim &amp; edit" in rows[open_.external_id]
