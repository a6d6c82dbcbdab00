"""The Webhooks page in Chromium, by keyboard: an admin who is not staff is told why an
internal address is refused; staff register one, read its secret once, send a test event
and read the delivery's answer (the attempt made here as the worker makes it), and remove it."""

import pytest
from playwright.sync_api import expect
from standardwebhooks.webhooks import Webhook as Verifier

from annotation.models import Webhook, WebhookDelivery
from annotation.webhooks import services
from tests.annotation.webhooks.receiver import receiver
from tests.browser.conftest import screenshot
from tests.factories import UserFactory

pytestmark = pytest.mark.browser


def test_webhooks_are_registered_tested_and_removed_from_their_page(
    page, login, project, people, settings
):
    settings.WEBHOOK_HOSTS = ["*"]
    UserFactory(username="root", is_staff=True)
    with receiver((200, {}, b"received, thanks")) as hook:
        login("alice")
        page.goto(f"/p/{project.slug}/")
        page.get_by_role("navigation", name="Project").get_by_role("link", name="Settings").click()
        page.get_by_role("navigation", name="Settings").get_by_role("link", name="webhooks").click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Webhooks")
        page.get_by_label("Address").fill(hook.url)
        page.get_by_label("Address").press("Enter")
        expect(page.locator("#url-error")).to_contain_text("internal address: only staff")
        expect(page.get_by_label("Address")).to_have_value(hook.url)  # kept as typed
        screenshot(page, "webhooks-internal-refused")
        assert not Webhook.objects.exists()

        page.context.clear_cookies()
        login("root")
        page.goto(f"/p/{project.slug}/settings/webhooks/")
        page.get_by_label("Address").focus()
        page.keyboard.type(hook.url)
        for _ in range(2):  # to run.succeeded, the second event, and off
            page.keyboard.press("Tab")
        expect(page.get_by_label("run.succeeded")).to_be_focused()
        page.keyboard.press("Space")
        page.get_by_label("Address").press("Enter")
        secret = page.locator("#webhook-secret").input_value()
        assert secret.startswith("whsec_")
        card = page.locator(".webhook", has_text=hook.url)
        expect(card).to_contain_text("No delivery yet.")
        assert "run.succeeded" not in Webhook.objects.get().events
        screenshot(page, "webhooks-secret-once")

        card.get_by_role("button", name="Send a test event").focus()
        page.keyboard.press("Enter")
        expect(page.get_by_role("status")).to_contain_text("A test event is on its way")
        expect(page.locator("#webhook-secret")).to_have_count(0)  # shown once only
        delivery = WebhookDelivery.objects.get()
        services.delivery_attempt(delivery.pk, 1)  # as the worker does
        page.reload()
        row = page.locator(".webhook tbody tr").first
        expect(row).to_contain_text("webhook.test")
        expect(row).to_contain_text("Succeeded")
        expect(row).to_contain_text("200")
        row.get_by_text("Answer's body").click()
        expect(row.locator("pre")).to_have_text("received, thanks")
        screenshot(page, "webhooks-delivery")
    (request,) = hook.received
    assert Verifier(secret).verify(request.body, request.headers)["type"] == "webhook.test"

    page.locator(".webhook").get_by_role("button", name="Remove the webhook").press("Enter")
    expect(page.locator("#no-webhooks")).to_be_visible()
    assert not Webhook.objects.exists()
