"""The published-import form at a phone's width (issue 59's walk): its table of datasets (files,
fields, the paper's counts) scrolled inside its card at 390 px, Fields and the paper's figures
cut at the card's edge. It stacks as the other wide tables do: a row a block, each cell naming
its column, all inside the card."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import screenshot
from tests.factories import UserFactory

pytestmark = pytest.mark.browser
WIDTH = 390


def test_the_datasets_table_reads_whole_on_a_phone(page, login):
    UserFactory(username="root", is_staff=True, is_superuser=True)
    page.set_viewport_size({"width": WIDTH, "height": 800})
    login("root")
    page.goto("/projects/new/published/")
    table = page.locator("#datasets")
    expect(table).to_be_visible()
    card = table.locator("xpath=..")
    assert card.evaluate("e => e.scrollWidth <= e.clientWidth"), "the table scrolls in its card"
    right = card.bounding_box()
    assert right is not None
    edge = right["x"] + right["width"] + 1
    quoref = table.locator("tbody tr", has_text="Quoref")
    cells = quoref.locator("td")
    expect(cells).to_have_count(5)
    for n in range(5):
        box = cells.nth(n).bounding_box()
        assert box is not None and box["x"] + box["width"] <= edge, (n, box)
    labels = [cells.nth(n).get_attribute("data-label") for n in range(5)]
    assert labels == ["Dataset", "Files, in this order", "Fields", "Paper: sets", "examples"]
    assert cells.nth(3).inner_text() == "415" and cells.nth(4).inner_text() == "700"
    screenshot(page, "published-form-phone")
