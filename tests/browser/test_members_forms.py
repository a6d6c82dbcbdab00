"""The Members page's two forms each own their role boxes: clicking a role's word in one form
ticks that form's box alone (issue 59: the forms shared ids, so clicking "expert" under Set a
user's roles ticked Add people's box, and a user who saved had ticked none: a removal)."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser


def test_clicking_a_role_word_ticks_only_its_own_forms_box(page, login, project, people):
    login("alice")
    page.goto(f"/p/{project.slug}/members/")
    add = page.locator("#people-form")
    set_roles = page.locator("form", has=page.locator("button:has-text('Save roles')"))

    set_roles.locator("label:has-text('expert')").click()
    expect(set_roles.get_by_role("checkbox", name="expert")).to_be_checked()
    expect(add.get_by_role("checkbox", name="expert")).not_to_be_checked()

    add.locator("label:has-text('admin')").click()
    expect(add.get_by_role("checkbox", name="admin")).to_be_checked()
    expect(set_roles.get_by_role("checkbox", name="admin")).not_to_be_checked()
    expect(add.get_by_role("checkbox", name="validator")).to_be_checked()  # its default
    expect(set_roles.get_by_role("checkbox", name="validator")).not_to_be_checked()

    ids = page.eval_on_selector_all("[id]", "els => els.map(e => e.id)")
    assert len(ids) == len(set(ids)), "every id on the page is unique"
    screenshot(page, "members-forms")
