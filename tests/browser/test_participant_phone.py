"""A crowd participant on a phone (390 px): the header names the participant by the platform's
id (Prolific's are 24 characters) and still shows Leave whole, on the start page and on an item;
nothing runs off the side."""

import pytest
from playwright.sync_api import expect

from annotation.crowd.services import studies
from tests.browser.conftest import screenshot
from tests.factories import submitted_perturbation

pytestmark = pytest.mark.browser
PID = "60f1a2b3c4d5e6f7a8b9c0d1"  # a Prolific id as Prolific writes them
WIDTH = 390


def _header_fits(page) -> None:  # type: ignore[no-untyped-def]
    leave = page.locator("header.topbar >> text=Leave")
    expect(leave).to_be_visible()
    box = leave.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, box
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    expect(page.locator("header.topbar")).to_contain_text(PID)  # the id, whole, if wrapped


def test_a_participants_header_fits_a_phone(project, people, browser, live_server):
    for _ in range(2):
        submitted_perturbation(project, people["expert"])
    study = studies.study_create(project=project, actor=people["admin"], name="Pilot",
                                 platform="prolific", items_per_participant=2)  # fmt: skip
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": WIDTH, "height": 800}
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"/p/{project.slug}/study/{study.token}/?PROLIFIC_PID={PID}&STUDY_ID=s&SESSION_ID=x")
    expect(page.locator("#start")).to_be_visible()
    _header_fits(page)
    screenshot(page, "participant-phone-start")
    page.click("#start")
    expect(page.locator("#vote-form")).to_be_visible()
    _header_fits(page)
    screenshot(page, "participant-phone-item")
    context.close()


def test_a_staff_users_header_fits_a_phone(page, login, project, people):
    """The header of a staff member (name, Notifications, Django admin, API, Log out) ran 10 px
    off the side at 390 px once Notifications joined it: its links wrap instead."""
    people["admin"].is_staff = True
    people["admin"].save()
    page.set_viewport_size({"width": WIDTH, "height": 800})
    login(people["admin"].username)
    page.goto(f"/p/{project.slug}/")
    expect(page.locator("header.topbar >> text=Django admin")).to_be_visible()
    for name in ("Notifications", "Django admin", "API", "Log out"):
        box = page.locator(f"header.topbar >> text={name}").first.bounding_box()
        assert box is not None and box["x"] + box["width"] <= WIDTH, (name, box)
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    screenshot(page, "staff-phone-header")
