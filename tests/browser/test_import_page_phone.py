"""The Import page's Earlier imports at a phone's width (issue 59's walk): at 390 px the table
showed "#" and the start of Quoref's two file names, and its other columns (Kind, Rows,
Warnings, By, When, SHA-256, Data and Undo) lay past the card's edge. It stacks as the other
wide tables do: each cell a line that names its column, inside the card."""

import pytest
from playwright.sync_api import expect

from tests.annotation.imports.test_published_real import GARDNER, TABLE_2, files_of
from tests.browser.conftest import assert_within_card, screenshot
from tests.browser.test_published_flow import import_from_the_page
from tests.factories import UserFactory

pytestmark = pytest.mark.browser
WIDTH = 390


def test_earlier_imports_read_whole_on_a_phone(page, login, tmp_path):
    UserFactory(username="root", is_staff=True, is_superuser=True)
    login("root")
    import_from_the_page(page, tmp_path, "quoref", files_of(GARDNER, TABLE_2["quoref"][0]))
    page.get_by_role("status").first.wait_for()
    page.set_viewport_size({"width": WIDTH, "height": 800})
    page.goto("/p/quoref/import/")
    row = page.locator("#batches tr").first
    expect(row.locator("a.undo")).to_be_visible()
    card = row.locator("xpath=ancestor::section[1]")
    cells = row.locator("td")
    assert_within_card(card, [cells.nth(n) for n in range(cells.count())], WIDTH)
    labels = [cells.nth(n).get_attribute("data-label") for n in range(cells.count())]
    assert labels[:9] == ["#", "File", "Kind", "Rows", "Skipped", "Warnings", "By", "When",
                          "SHA-256"]  # fmt: skip
    assert "65" in cells.nth(5).inner_text()  # Quoref's warnings, on the phone too
    screenshot(page, "import-page-phone")
