"""The Data page in Chromium: undo a wrong import in three clicks, find rows with the filters,
act on a selection, read a row's history, and delete a project by typing its slug."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import expect
from rest_framework.test import APIClient

from annotation.models import Example, Perturbation, Project, ValidationItem, Vote
from tests.annotation.data.test_data import CAD, import_cad_dev, snapshot
from tests.annotation.imports.test_published_real import real
from tests.browser.conftest import screenshot
from tests.factories import member, submitted_perturbation, vote_all

pytestmark = pytest.mark.browser


def test_cads_mixed_up_import_is_undone_from_the_pages_in_three_clicks(
    page, login, project, people
):
    real(CAD)
    validators = [member(project, f"val{n}", "validator") for n in range(5)]
    earlier = submitted_perturbation(project, people["expert"])
    vote_all(earlier.item, validators, ["negative"] * 5)
    before = snapshot(project)
    client = APIClient()
    client.force_authenticate(people["admin"])
    batch = import_cad_dev(client, project).json()["batch"]
    assert Perturbation.objects.filter(batch_id=batch).count() == 245

    login("alice")
    page.goto(f"/p/{project.slug}/")
    page.get_by_role("link", name="Import", exact=True).click()  # 1
    page.locator(f"tr[data-batch='{batch}'] a.undo").click()  # 2
    plan = page.locator("#removal-plan")
    expect(plan).to_contain_text("245 originals")
    expect(plan).to_contain_text("245 perturbations")
    controls = ValidationItem.objects.filter(control__batch_id=batch).count()
    expect(page.locator("#plan-controls")).to_have_text(str(controls))  # why items > 245
    screenshot(page, "data-undo-confirm")
    page.click("#confirm-removal")  # 3
    expect(page.get_by_role("status")).to_contain_text("Undid the import of orig-dev.tsv")
    assert snapshot(project) == before


def test_filter_select_tag_and_delete_on_the_data_page(page, login, project, people):
    made = [submitted_perturbation(project, people["expert"]) for _ in range(4)]
    Perturbation.objects.filter(pk=made[0].pk).update(status="accepted")
    login("alice")
    page.goto(f"/p/{project.slug}/")
    page.get_by_role("link", name="Data", exact=True).click()
    rows = page.locator("#data-rows tbody tr")
    expect(rows).to_have_count(4)
    page.select_option("select[name=status]", "submitted")
    page.click("#data-filters button[type=submit]")
    expect(rows).to_have_count(3)
    expect(page.locator("#bulk-go")).to_be_disabled()
    page.check("#select-all")
    expect(page.locator("#selected-count")).to_have_text("3")
    page.select_option("#bulk-action", "tag")
    page.select_option("#bulk-tag", "intensity")
    page.click("#bulk-go")
    expect(page.get_by_role("status")).to_contain_text("Tag: 3 done")
    tagged = Perturbation.objects.filter(tags__name="intensity").values_list("pk", flat=True)
    assert sorted(tagged) == sorted(p.pk for p in made[1:])
    expect(page.locator("select[name=status]")).to_have_value("submitted")  # filters kept

    page.locator("#data-rows tbody tr").first.locator("input[name=ids]").check()
    first = int(page.locator("#data-rows tbody tr").first.get_attribute("data-id") or 0)
    page.select_option("#bulk-action", "delete")
    page.click("#bulk-go")
    expect(page.locator("#plan-perturbations")).to_have_text("1")
    screenshot(page, "data-delete-confirm")
    page.click("#confirm-removal")
    expect(page.get_by_role("status")).to_contain_text("Delete: 1 done")
    assert not Perturbation.objects.filter(pk=first).exists()
    screenshot(page, "data-page")


def test_a_rows_page_shows_its_votes_in_order(page, login, project, people):
    validators = [member(project, f"val{n}", "validator") for n in range(5)]
    p = submitted_perturbation(project, people["expert"])
    vote_all(p.item, validators, ["negative"] * 4 + ["positive"])
    login("alice")
    page.goto(f"/p/{project.slug}/data/?status=accepted")
    page.get_by_role("link", name=str(p.pk), exact=True).click()
    history = page.locator("#history li")
    expect(history.filter(has_text="voted")).to_have_count(5)
    expect(history.last).to_contain_text("resolved")
    voters = [v.validator.username for v in Vote.objects.filter(item=p.item).order_by("id")]
    assert history.filter(has_text="voted").locator("b").all_inner_texts() == voters
    screenshot(page, "data-item")
    page.click("#back-to-data")  # back to the list as it was filtered
    expect(page.locator("select[name=status]")).to_have_value("accepted")


def test_an_expert_sees_only_their_own_rows_and_no_actions(page, login, project, people):
    own = submitted_perturbation(project, people["expert"])
    other = member(project, "otto", "expert")
    submitted_perturbation(project, other)
    login("erin")
    page.goto(f"/p/{project.slug}/data/")
    rows = page.locator("#data-rows tbody tr")
    expect(rows).to_have_count(1)
    assert rows.first.get_attribute("data-id") == str(own.pk)
    expect(page.locator("#bulk-go")).to_have_count(0)


def test_a_project_is_deleted_by_typing_its_slug(page, login, project, people):
    client = APIClient()
    client.force_authenticate(people["admin"])
    content = json.dumps({"id": "a", "text": "One.", "label": "positive"}).encode()
    client.post(f"/api/projects/{project.slug}/examples/import/",
                {"file": SimpleUploadedFile("one.jsonl", content)}, format="multipart")  # fmt: skip
    login("alice")
    page.goto(f"/p/{project.slug}/settings/")
    form = page.locator("#delete-project")
    form.locator("input[name=confirm]").fill("not-it")
    form.get_by_role("button", name="Delete project").click()
    expect(page.get_by_role("status")).to_contain_text("Type the project's slug (sentiment)")
    assert Project.objects.filter(slug="sentiment").exists()
    form = page.locator("#delete-project")
    form.locator("input[name=confirm]").fill("sentiment")
    form.get_by_role("button", name="Delete project").click()
    expect(page.get_by_role("status")).to_contain_text("Deleted the project")
    assert not Project.objects.filter(slug="sentiment").exists()
    assert not Example.objects.filter(external_id="a").exists()


def test_the_bulk_bar_shows_the_chosen_actions_controls_and_wants_a_tag(
    page, login, project, people
):
    """The walk of issue 47: every control showed for every action, and "add tag" with no tag
    was sent, to come back as "tag names one of the project's tags." Now each action shows its
    own controls, and a tag action without a tag is stopped before it is sent."""
    made = [submitted_perturbation(project, people["expert"]) for _ in range(2)]
    login("alice")
    page.goto(f"/p/{project.slug}/data/")
    fmt, votes = page.locator("select[name=format]"), page.locator("input[name=clear_votes]")
    reason, tag = page.locator("input[name=reason]"), page.locator("#bulk-tag")
    expect(fmt).to_be_visible()  # export, the first action
    for hidden in (votes, reason, tag):
        expect(hidden).to_be_hidden()
    page.select_option("#bulk-action", "send_back")
    expect(votes).to_be_visible()
    for hidden in (fmt, reason, tag):
        expect(hidden).to_be_hidden()
    page.select_option("#bulk-action", "reject")
    expect(reason).to_be_visible()
    expect(tag).to_be_hidden()
    page.select_option("#bulk-action", "tag")
    expect(tag).to_be_visible()
    for hidden in (fmt, votes, reason):
        expect(hidden).to_be_hidden()
    page.check("#select-all")
    url = page.url
    page.click("#bulk-go")
    assert tag.evaluate("t => t.validationMessage") == "Choose a tag to add."
    assert page.url == url
    assert not Perturbation.objects.filter(pk__in=[p.pk for p in made], tags__name="intensity")
    screenshot(page, "data-bulk-tag-wanted")
    page.select_option("#bulk-tag", "intensity")
    page.click("#bulk-go")
    expect(page.get_by_role("status")).to_contain_text("Tag: 2 done")
