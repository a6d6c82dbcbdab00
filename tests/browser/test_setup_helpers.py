"""Small helps on the setup pages: the slug follows the name, and set-password links copy."""

import pytest
from playwright.sync_api import expect

from tests.factories import project_creator

pytestmark = pytest.mark.browser


def test_the_slug_follows_the_name_until_it_is_typed(page, login, db):
    project_creator("carol")
    login("carol")
    page.goto("/projects/new/")
    page.fill("#id_name", "Négation & Quantifiers 2")
    expect(page.locator("#id_slug")).to_have_value("negation-quantifiers-2")
    page.fill("#id_slug", "mine")
    page.fill("#id_name", "Something else")
    expect(page.locator("#id_slug")).to_have_value("mine")


def test_set_password_links_copy_with_a_button(page, login, project, people):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    login("alice")
    page.goto(f"/p/{project.slug}/members/")
    page.fill("textarea[name=people]", "newbie, validator\nother, expert")
    page.locator("#people-form button[type=submit]").click()
    links = page.locator("input.link-copy")
    expect(links).to_have_count(2)
    page.click("#copy-all")
    expect(page.locator("#copy-all")).to_have_text("Copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.split("\n") == [links.nth(0).input_value(), links.nth(1).input_value()]
