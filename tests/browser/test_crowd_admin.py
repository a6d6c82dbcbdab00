"""The crowd admin pages in the browser (issue 49 walks): a validator who failed the test reads
as ended and the admin gives a retest from the Validators page; saving the Settings with a gate
on fills the pool from the labelled originals; a refused question keeps what was typed; the
setup guide is a link; the Studies and Validators tables work at a phone's width."""

import pytest
from playwright.sync_api import expect

from annotation.crowd.services import studies
from annotation.models import GoldItem, ValidatorStatus
from annotation.validation.services.queue import next_item
from annotation.validation.services.votes import vote_cast
from tests.annotation.crowd.conftest import wrong_label
from tests.browser.conftest import screenshot
from tests.factories import ExampleFactory, member

pytestmark = pytest.mark.browser


def test_an_admin_gives_a_failed_validator_a_retest(page, login, project, people):
    project.settings = {**project.settings, "control_rate": 0,
                        "qualification_min_accuracy": 1.0}  # fmt: skip
    project.save()
    for n in range(4):
        ExampleFactory(project=project, label=["positive", "negative"][n % 2],
                       fields={"text": f"Known review {n}."})  # fmt: skip
    login("alice")
    # Saving the Settings with a gate on fills the pool (it waited for the Studies page).
    page.goto(f"/p/{project.slug}/settings/")
    page.fill("input[name=setting_qualification_items]", "2")
    page.click("button:has-text('Save')")
    expect(page.get_by_role("status")).to_contain_text("The gold pool holds 4 items")
    assert GoldItem.objects.filter(project=project).count() == 4
    project.refresh_from_db()
    page.goto(f"/p/{project.slug}/studies/")
    expect(page.locator("#pool-size")).to_have_text("The gold pool holds 4 items")
    expect(page.locator("button[name=refresh_pool]")).to_contain_text("Refresh the pool")
    screenshot(page, "studies-pool-filled")
    worker = member(project, "walter", "validator")
    for _ in range(2):
        item = next_item(project=project, validator=worker)
        vote_cast(project=project, item_id=item.pk, validator=worker, label=wrong_label(item))
    page.goto(f"/p/{project.slug}/validators/")
    row = page.locator("#validators tbody tr", has_text="walter")
    expect(row).to_contain_text("ended (test failed)")
    expect(row.locator("button")).to_have_text("Allow a retest")
    screenshot(page, "validators-test-failed")
    row.locator("button").click()
    expect(page.locator("body")).to_contain_text("may take the test once more")
    row = page.locator("#validators tbody tr", has_text="walter")
    expect(row).not_to_contain_text("ended")


def test_a_refused_question_stays_typed_and_labels_match_in_any_case(page, login, project, people):
    login("alice")
    page.goto(f"/p/{project.slug}/studies/")
    typed = '{"fields": {"text": "I loved every minute."}, "label": "Great"}'
    page.fill("#questions", typed)
    page.click("text=Save the questions")
    expect(page.locator("#questions-error")).to_contain_text("'Great' is not one of positive")
    expect(page.locator("#questions")).to_have_value(typed)
    screenshot(page, "studies-question-refused")
    page.fill("#questions", typed.replace("Great", "Positive"))
    page.click("text=Save the questions")
    expect(page.get_by_role("status")).to_contain_text("1 comprehension questions saved")
    expect(page.locator("#questions")).to_have_value(typed.replace("Great", "positive"))


def test_the_setup_guide_is_a_link_on_the_studies_page(page, login, project, people):
    login("alice")
    page.goto(f"/p/{project.slug}/studies/")
    page.click("#guide-link")
    expect(page.locator("h1")).to_have_text("Setting up a study")
    expect(page.locator("#guide")).to_contain_text("Step by step, on Prolific")
    expect(page.locator("#guide")).to_contain_text("On Mechanical Turk")
    screenshot(page, "studies-guide")


def _on_screen(page, locator) -> None:  # type: ignore[no-untyped-def]
    """Visible, and inside the 390 px screen without scrolling sideways."""
    expect(locator).to_be_visible()
    box = locator.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box


def test_the_studies_and_validators_tables_at_a_phones_width(page, login, project, people):
    """At 390 px the codes, the payments link and the Test, Gold checks and Status columns ran
    off the right of the screen with no cue (second walk, #3): the rows stack, each cell named."""
    project.settings = {**project.settings, "control_rate": 0, "qualification_items": 2,
                        "qualification_min_accuracy": 1.0}  # fmt: skip
    project.save()
    for n in range(4):
        ExampleFactory(project=project, label=["positive", "negative"][n % 2],
                       fields={"text": f"Known review {n}."})  # fmt: skip
    studies.study_create(project=project, actor=people["admin"], name="A pilot of the crowd",
                         platform="prolific", completion_code="C0MPLETE-2026")  # fmt: skip
    worker = member(project, "walter-the-careless-worker", "validator")
    for _ in range(2):
        item = next_item(project=project, validator=worker)
        vote_cast(project=project, item_id=item.pk, validator=worker, label=wrong_label(item))
    assert ValidatorStatus.objects.get(validator=worker).qualification == "failed"
    page.set_viewport_size({"width": 390, "height": 800})
    login("alice")
    page.goto(f"/p/{project.slug}/studies/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    row = page.locator("#studies tbody tr").first
    _on_screen(page, row.locator("td", has_text="C0MPLETE-2026"))
    _on_screen(page, row.locator("td", has_text="work ended"))
    _on_screen(page, row.get_by_role("link", name="CSV"))
    _on_screen(page, row.get_by_role("button", name="Copy"))
    _on_screen(page, row.locator("input.link-copy"))
    # Stacked, each cell says its column.
    named = "(td) => getComputedStyle(td, '::before').content"
    assert row.locator("td[data-label=Codes]").evaluate(named) == '"Codes: "'
    screenshot(page, "phone-studies")
    page.goto(f"/p/{project.slug}/validators/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    row = page.locator("#validators tbody tr", has_text="walter")
    for column in ("Test", "Gold checks", "Status"):
        _on_screen(page, row.locator(f"td[data-label='{column}']"))
    expect(row.locator("td[data-label=Status]")).to_contain_text("ended (test failed)")
    _on_screen(page, row.get_by_role("button", name="Allow a retest"))
    _on_screen(page, page.locator("#validators thead").get_by_role("link", name="Status"))
    screenshot(page, "phone-validators")
