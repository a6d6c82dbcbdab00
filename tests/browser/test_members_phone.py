"""The Members page at a phone's width (issue 59's walk): at 390 px the members' table scrolled
inside its card, the Roles column cut at the edge ("valida…"), with a crowd participant's long
username and a staff member's E-mail column. Its tables stack as the other wide tables do: each
cell a line that names its column, inside the card."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import assert_within_card, screenshot
from tests.factories import member

pytestmark = pytest.mark.browser
WIDTH = 390


def test_the_members_table_reads_whole_on_a_phone(page, login, project, people):
    people["admin"].is_staff = True  # staff see the E-mail column
    people["admin"].save()
    crowd = member(project, "prolific-3-5f3c1a2b9e8d7c6b5a4f3e2d", "validator", "expert")
    crowd.email = "a.rather.long.address.of.a.participant@example.org"
    crowd.save()
    page.set_viewport_size({"width": WIDTH, "height": 800})
    login(people["admin"].username)
    page.goto(f"/p/{project.slug}/members/")
    row = page.locator("#members tbody tr", has_text=crowd.username)
    expect(row).to_have_count(1)
    card = page.locator("#members").locator("xpath=ancestor::section[1]")
    cells = row.locator("td")
    assert_within_card(card, [cells.nth(n) for n in range(cells.count())], WIDTH)
    roles = row.locator("td[data-label=Roles]")
    expect(roles).to_contain_text("validator")
    expect(roles).to_contain_text("expert")
    screenshot(page, "members-phone")
