"""The crowd's gates are set where the study is made (issue 59): the Studies page shows them and
saves them as the settings they are, which the Settings page then shows; a refused value stays
in the form with the reason."""

import pytest
from playwright.sync_api import expect

from annotation.models import Project
from tests.browser.conftest import screenshot
from tests.factories import ExampleFactory

pytestmark = pytest.mark.browser


def test_an_admin_sets_the_gates_on_the_studies_page(page, login, project, people):
    for n in range(4):
        ExampleFactory(project=project, label=["positive", "negative"][n % 2],
                       fields={"text": f"Known review {n}."})  # fmt: skip
    login("alice")
    page.goto(f"/p/{project.slug}/studies/")
    expect(page.locator("#gates-now")).to_contain_text("Qualification test: none")
    page.fill("input[name=setting_qualification_items]", "3")
    page.fill("input[name=setting_gold_rate]", "0.1")
    page.fill("input[name=setting_items_per_participant]", "30")
    page.click("#gates-form button[type=submit]")
    expect(page.get_by_role("status")).to_contain_text("The gates are saved. The gold pool holds 4")
    expect(page.locator("#gates-now")).to_contain_text("3 items from the gold pool")
    expect(page.locator("#gates-now")).to_contain_text("10% of items served")
    expect(page.locator("input[name=setting_items_per_participant]")).to_have_value("30")
    screenshot(page, "studies-gates")
    settings = Project.objects.get(pk=project.pk).settings
    assert (settings["qualification_items"], settings["gold_rate"]) == (3, 0.1)
    assert settings["items_per_participant"] == 30
    page.goto(f"/p/{project.slug}/settings/")  # the same settings, where they were before
    expect(page.locator("input[name=setting_gold_rate]")).to_have_value("0.1")
    # A value out of bounds (past the browser's own check) is refused, and kept in the form.
    page.goto(f"/p/{project.slug}/studies/")
    page.eval_on_selector("input[name=setting_gold_rate]", "box => box.removeAttribute('max')")
    page.fill("input[name=setting_gold_rate]", "1.5")
    page.click("#gates-form button[type=submit]")
    expect(page.locator("#gates-error")).to_contain_text("gold_rate")
    expect(page.locator("input[name=setting_gold_rate]")).to_have_value("1.5")
    assert Project.objects.get(pk=project.pk).settings["gold_rate"] == 0.1
