"""The Pivots page at a phone's width (issue 59's walk, with IMDb's reviews): at 390 px the
table squeezed each review into a column a few letters wide, words broken mid-word, and
"Claim & edit" ran off the side. It stacks as the other wide tables do: the text has the
card's width, and each other cell names its column."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import screenshot
from tests.factories import ExampleFactory

pytestmark = pytest.mark.browser
WIDTH = 390
REVIEW = (
    "A spoiler.<br /><br />What three words can guarantee you a terrible film? Cheap Canadian "
    "Production. THE BRAIN fits those words perfectly. Terrible script, idiotic acting."
)


def test_a_pivot_and_its_claim_button_read_whole_on_a_phone(page, login, project, people):
    ExampleFactory(project=project, external_id="test-1", label="negative",
                   fields={"text": REVIEW})  # fmt: skip
    page.set_viewport_size({"width": WIDTH, "height": 800})
    login(people["expert"].username)
    page.goto(f"/p/{project.slug}/pivots/")
    row = page.locator("table.pivots tbody tr", has_text="test-1")
    claim = row.get_by_role("button", name="Claim & edit")
    expect(claim).to_be_visible()
    box = claim.bounding_box()
    assert box is not None and box["x"] + box["width"] <= WIDTH, box
    text = row.locator(".excerpt").first.bounding_box()
    assert text is not None and text["width"] >= WIDTH / 2, text  # not a sliver
    assert row.locator("td[data-label=Label]").inner_text() == "negative"
    assert "<br" not in row.inner_text()
    card = row.locator("xpath=ancestor::section[1]")
    assert card.evaluate("e => e.scrollWidth <= e.clientWidth"), "the table scrolls in its card"
    screenshot(page, "pivots-phone")
