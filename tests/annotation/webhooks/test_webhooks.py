"""Webhooks (README, "Webhooks"): registered by admins, signed as Standard Webhooks says (checked
by the `standardwebhooks` package, as receivers check them), retried with every attempt
recorded, and held to the host rules served models follow."""

import json
import socket
import time
from urllib.parse import urlsplit

import pytest
from django.db import transaction
from standardwebhooks.webhooks import Webhook as Verifier
from standardwebhooks.webhooks import WebhookVerificationError

from annotation.models import AuditLog, Project, Webhook, WebhookDelivery
from annotation.webhooks import events, services, signing
from tests.annotation.webhooks.receiver import receiver
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(db):  # type: ignore[no-untyped-def]
    return UserFactory(username="root", is_staff=True)


def register(client, project, url, events=("release.published",)):  # type: ignore[no-untyped-def]
    return client.post(
        f"/api/projects/{project.slug}/webhooks/",
        {"url": url, "events": list(events)},
        format="json",
    )


def test_a_signature_verifies_with_the_standard_webhooks_package_and_a_changed_body_does_not():
    secret = signing.new_secret()
    body = b'{"type": "run.succeeded", "data": {"id": 7}}'
    headers = signing.signed_headers(secret, "msg_1", int(time.time()), body)
    verifier = Verifier(secret)
    assert verifier.verify(body, headers) == json.loads(body)
    with pytest.raises(WebhookVerificationError):
        verifier.verify(body.replace(b"7", b"8"), headers)
    with pytest.raises(WebhookVerificationError):
        Verifier(signing.new_secret()).verify(body, headers)


def test_the_secret_is_given_once_and_kept_encrypted(project, people, staff, client_for):
    with receiver() as hook:
        answer = register(client_for(staff), project, hook.url)
    assert answer.status_code == 201, answer.content
    secret = answer.json()["secret"]
    assert secret.startswith("whsec_")
    listed = client_for(people["admin"]).get(f"/api/projects/{project.slug}/webhooks/").json()
    assert listed["count"] == 1 and "secret" not in listed["results"][0]
    stored = Webhook.objects.get()
    assert (
        secret not in stored.secret_encrypted and signing.unseal(stored.secret_encrypted) == secret
    )
    assert AuditLog.objects.filter(action="webhook_created", project=project).exists()


def test_an_admin_who_is_not_staff_may_not_register_an_internal_address(
    project, people, staff, client_for, settings
):
    settings.WEBHOOK_HOSTS = ["*"]
    for url in ("http://127.0.0.1:9/hook", "http://10.0.0.8/hook", "http://[::1]:8000/"):
        answer = register(client_for(people["admin"]), project, url)
        assert answer.status_code == 403, (url, answer.content)
        assert answer.json()["field"] == "url" and "internal address" in answer.json()["detail"]
    assert not Webhook.objects.exists()
    settings.WEBHOOK_HOSTS = ["hooks.example.org"]
    answer = register(client_for(people["admin"]), project, "https://ci.example.org/hook")
    assert answer.status_code == 403 and "not among the hosts" in answer.json()["detail"]
    # Staff may, as with served models.
    assert register(client_for(staff), project, "http://127.0.0.1:9/hook").status_code == 201
    assert Webhook.objects.get().trusted


@pytest.mark.parametrize(
    "url", ["ftp://example.org/", "https://user:pw@example.org/", "https://example.org/#x"]
)
def test_an_address_that_is_not_a_plain_http_one_is_refused(url, project, staff, client_for):
    assert register(client_for(staff), project, url).status_code == 400


def test_a_failed_delivery_is_tried_again_and_each_attempt_is_signed_and_recorded(
    project, staff, client_for, settings
):
    settings.WEBHOOK_RETRY_DELAYS = [7, 30]
    failing = (500, {}, b"the receiver is down " + b"x" * 5000)
    with receiver(failing, (200, {}, b"thanks")) as hook:
        secret = register(client_for(staff), project, hook.url).json()["secret"]
        events.send_test(Webhook.objects.get())
        delivery = WebhookDelivery.objects.get()
        assert services.delivery_attempt(delivery.pk, 1) == 7  # the first delay
        assert services.delivery_attempt(delivery.pk, 1) is None  # a message delivered twice
        assert services.delivery_attempt(delivery.pk, 2) is None  # succeeded: no more
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("succeeded", 2)
    first, second = delivery.attempt_rows.order_by("number")
    assert (first.status_code, second.status_code) == (500, 200)
    assert first.body_excerpt.startswith("the receiver is down") and len(first.body_excerpt) == 1000
    assert second.body_excerpt == "thanks"
    assert len(hook.received) == 2
    verifier = Verifier(secret)
    for request in hook.received:
        assert request.headers["webhook-id"] == delivery.message_id
        body = verifier.verify(request.body, request.headers)
        assert body["type"] == "webhook.test" and body["data"]["project"] == project.slug


def test_a_delivery_whose_attempts_all_fail_ends_failed(project, staff, client_for, settings):
    settings.WEBHOOK_RETRY_DELAYS = [1]
    with receiver((503, {}, b"")) as hook:
        register(client_for(staff), project, hook.url)
        events.send_test(Webhook.objects.get())
        delivery = WebhookDelivery.objects.get()
        assert services.delivery_attempt(delivery.pk, 1) == 1
        assert services.delivery_attempt(delivery.pk, 2) is None
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, len(hook.received)) == ("failed", 2, 2)


def test_a_webhook_whose_host_turned_internal_is_not_reached(project, people, settings):
    """A name may resolve elsewhere after it was registered: the worker asks the rules again
    before each attempt of a webhook that was not registered by staff."""
    settings.WEBHOOK_HOSTS = ["*"]
    with receiver() as hook:
        webhook = Webhook.objects.create(
            project=project, url=hook.url, events=["release.published"],
            secret_encrypted=signing.seal(signing.new_secret()), created_by=people["admin"],
        )  # fmt: skip
        events.send_test(webhook)
        delivery = WebhookDelivery.objects.get()
        assert services.delivery_attempt(delivery.pk, 1) is None  # no retry mends it
    delivery.refresh_from_db()
    assert delivery.status == "failed" and hook.received == []
    assert "internal address" in delivery.attempt_rows.get().error


def test_a_name_that_rebinds_inside_after_the_check_is_reached_at_the_address_checked(
    project, people, settings, monkeypatch
):
    """DNS rebinding: a name answers a public address to the worker's check and 127.0.0.1 to
    any later lookup (the resolver is the one thing faked: it is outside the product). The
    attempt connects to the address checked, so the receiver inside never hears it."""
    settings.WEBHOOK_HOSTS, settings.WEBHOOK_TIMEOUT = ["*"], 1
    real, lookups = socket.getaddrinfo, []

    def rebinding(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        if host != "rebind.example":
            return real(host, *args, **kwargs)
        lookups.append(host)
        return real("93.184.215.14" if len(lookups) == 1 else "127.0.0.1", *args, **kwargs)

    with receiver() as hook:
        webhook = Webhook.objects.create(
            project=project, url=f"http://rebind.example:{urlsplit(hook.url).port}/hook",
            events=["release.published"], secret_encrypted=signing.seal(signing.new_secret()),
        )  # fmt: skip
        events.send_test(webhook)
        monkeypatch.setattr(socket, "getaddrinfo", rebinding)
        services.delivery_attempt(WebhookDelivery.objects.get().pk, 1)
    assert hook.received == []
    assert lookups == ["rebind.example"]  # the check's lookup alone
    assert WebhookDelivery.objects.get().attempt_rows.get().status_code is None


def test_every_delivery_has_a_deadline_a_size_cap_and_follows_no_redirect(
    project, staff, client_for, settings
):
    settings.WEBHOOK_RETRY_DELAYS = []
    settings.WEBHOOK_TIMEOUT = 1
    settings.WEBHOOK_MAX_ANSWER_BYTES = 1000
    answers = {
        "slow": (200, {"X-Test-Sleep": "3"}, b"late"),
        "large": (200, {}, b"x" * 5000),
        "moved": (302, {"Location": "http://127.0.0.1:9/elsewhere"}, b""),
    }
    found = {}
    for name, answer in answers.items():
        with receiver(answer) as hook:
            register(client_for(staff), project, hook.url)
            webhook = Webhook.objects.latest("pk")
            events.send_test(webhook)
            delivery = webhook.deliveries.get()
            services.delivery_attempt(delivery.pk, 1)
            attempt = delivery.attempt_rows.get()
            found[name] = (attempt.status_code, attempt.error, len(hook.received))
    assert found["slow"][0] is None and "no whole answer within 1 s" in found["slow"][1]
    assert found["large"][0] is None and "WEBHOOK_MAX_ANSWER_BYTES" in found["large"][1]
    assert found["moved"] == (302, "", 1)  # recorded as it came, and not followed
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"failed"}


def test_deliveries_are_listed_with_their_answers_and_a_webhook_is_removed(
    project, people, staff, client_for
):
    with receiver((200, {}, b"ok")) as hook:
        register(client_for(staff), project, hook.url)
        webhook = Webhook.objects.get()
        admin = client_for(people["admin"])
        base = f"/api/projects/{project.slug}/webhooks/{webhook.pk}"
        assert admin.post(f"{base}/test/").status_code == 202
        services.delivery_attempt(WebhookDelivery.objects.get().pk, 1)
    page = admin.get(f"{base}/deliveries/").json()
    (row,) = page["results"]
    assert (row["event"], row["status"]) == ("webhook.test", "succeeded")
    assert row["attempts"][0]["status_code"] == 200 and row["attempts"][0]["body_excerpt"] == "ok"
    assert admin.delete(f"{base}/").status_code == 204
    assert not Webhook.objects.exists() and not WebhookDelivery.objects.exists()
    assert admin.get(f"{base}/deliveries/").status_code == 404


def test_a_webhook_of_another_project_is_not_found(project, people, staff, client_for):
    other = Project.objects.get(slug="elsewhere")  # the outsider's
    hook = Webhook.objects.create(project=other, url="https://example.org/", events=["run.failed"])
    admin = client_for(people["admin"])
    assert admin.delete(f"/api/projects/{project.slug}/webhooks/{hook.pk}/").status_code == 404
    assert Webhook.objects.filter(pk=hook.pk).exists()


def test_an_event_is_delivered_only_to_the_webhooks_that_want_it_once_it_commits(
    project, staff, django_capture_on_commit_callbacks
):
    wants = Webhook.objects.create(project=project, url="https://a.example.org/",
                                   events=["item.resolved", "perturbation.disputed"])  # fmt: skip
    Webhook.objects.create(project=project, url="https://b.example.org/", events=["run.failed"])
    with django_capture_on_commit_callbacks() as queued, transaction.atomic():
        assert events.announce(project, "item.resolved", {"item": {"id": 5}}) == 1
    assert len(queued) == 1  # the delivery's task, sent after the commit
    delivery = WebhookDelivery.objects.get()
    assert delivery.webhook == wants and delivery.event == "item.resolved"
    assert delivery.payload["type"] == "item.resolved"
    assert delivery.payload["data"] == {"project": project.slug, "item": {"id": 5}}
