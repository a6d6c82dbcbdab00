"""The inbox in Chromium, by keyboard: an expert whose perturbation the validators disputed
and an admin rejected sees the header's unread count, opens the inbox, marks one read, then
all, and chooses what comes (and by e-mail); a validator who voted sees no count."""

import pytest
from django.db import transaction
from playwright.sync_api import expect

from annotation.models import NotificationPreference
from annotation.validation.services.adjudication import perturbation_adjudicate
from tests.browser.conftest import screenshot
from tests.factories import member, submitted_perturbation, vote_all

pytestmark = pytest.mark.browser


def test_the_inbox_is_read_and_chosen_by_keyboard(page, login, project, people):  # type: ignore[no-untyped-def]
    perturbation = submitted_perturbation(project, people["expert"], label="negative")
    validators = [member(project, f"val{n}", "validator") for n in range(5)]
    with transaction.atomic():  # committed: their events run after it, as on the site
        vote_all(perturbation.item, validators, ["positive"] * 5)
    perturbation.refresh_from_db()
    with transaction.atomic():
        perturbation_adjudicate(perturbation=perturbation, admin=people["admin"], decision="reject")

    login("val0")
    page.goto("/notifications/")
    expect(page.locator("#inbox-link")).to_have_accessible_name("Notifications: none unread")
    expect(page.locator(".notifications")).to_have_text("No notification yet.")
    page.context.clear_cookies()

    login("erin")
    inbox = page.locator("#inbox-link")
    expect(inbox.locator("#unread-count")).to_have_text("2")
    inbox.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1)).to_have_text("Notifications")
    rows = page.locator(".notifications li")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text(f"#{perturbation.pk}")
    expect(rows.nth(0)).to_contain_text("was rejected by an admin.")
    expect(rows.nth(1)).to_contain_text("was disputed by the validators.")
    screenshot(page, "notifications-inbox")

    rows.nth(1).get_by_role("button", name="Mark read").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#unread-count")).to_have_text("1")
    expect(page.locator(".notifications li.read")).to_have_count(1)
    page.get_by_role("button", name="Mark all read").focus()
    page.keyboard.press("Space")
    expect(page.locator("#unread-count")).to_have_count(0)
    expect(page.locator(".notifications li.unread")).to_have_count(0)
    expect(page.get_by_role("status")).to_contain_text("1 marked read.")

    page.get_by_label("Your perturbation was sent back to validation").focus()
    page.keyboard.press("Space")
    page.get_by_label("Also by e-mail").focus()
    page.keyboard.press("Space")
    page.get_by_role("button", name="Save the choices").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_contain_text("Your notification choices are saved.")
    expect(page.get_by_label("Your perturbation was sent back to validation")).not_to_be_checked()
    expect(page.get_by_label("Also by e-mail")).to_be_checked()
    screenshot(page, "notifications-choices")
    saved = NotificationPreference.objects.get(user=people["expert"])
    assert "perturbation.sent_back" not in saved.kinds and saved.email
