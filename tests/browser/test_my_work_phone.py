"""My work at a phone's width (issue 59's walk): at 390 px its eight columns scrolled inside
the card, Status, Outcome and Withdraw past its edge. It stacks as the other wide tables do:
each cell a line that names its column, inside the card."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import assert_within_card, screenshot
from tests.factories import submitted_perturbation

pytestmark = pytest.mark.browser
WIDTH = 390


def test_my_work_reads_whole_on_a_phone(page, login, project, people):
    submitted_perturbation(project, people["expert"])
    page.set_viewport_size({"width": WIDTH, "height": 800})
    login(people["expert"].username)
    page.goto(f"/p/{project.slug}/mine/")
    row = page.locator("#my-work tbody tr").first
    withdraw = row.get_by_role("button", name="Withdraw")
    expect(withdraw).to_be_visible()
    card = row.locator("xpath=ancestor::section[1]")
    assert_within_card(card, [row.locator("td[data-label=Status]"), withdraw], WIDTH)
    expect(row.locator("td[data-label=Status]")).to_have_text("Submitted")
    screenshot(page, "my-work-phone")
