"""The crowd admin pages in the browser (issue 49 walk): a validator who failed the test reads
as ended and the admin gives a retest from the Validators page; the Studies page shows the pool
filled from the labelled originals once a gate is on."""

import pytest
from playwright.sync_api import expect

from annotation.validation.queue import next_item
from annotation.validation.votes import vote_cast
from tests.annotation.crowd.conftest import wrong_label
from tests.browser.conftest import screenshot
from tests.factories import ExampleFactory, member

pytestmark = pytest.mark.browser


def test_an_admin_gives_a_failed_validator_a_retest(page, login, project, people):
    project.settings = {**project.settings, "control_rate": 0, "qualification_items": 2,
                        "qualification_min_accuracy": 1.0}  # fmt: skip
    project.save()
    for n in range(4):
        ExampleFactory(project=project, label=["positive", "negative"][n % 2],
                       fields={"text": f"Known review {n}."})  # fmt: skip
    login("alice")
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
