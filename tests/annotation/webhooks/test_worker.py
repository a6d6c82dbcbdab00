"""Webhooks through a real Celery worker: a release published in a transaction reaches a
receiver on 127.0.0.1 once it commits, signed (verified by the `standardwebhooks` package),
its failed first attempt tried again; a webhook that a project admin who is not staff points
at an internal address is refused, at registration and on the worker."""

import pytest
from standardwebhooks.webhooks import Webhook as Verifier

from annotation.models import Webhook, WebhookDelivery
from annotation.webhooks import signing
from tests.annotation.webhooks.receiver import receiver
from tests.factories import UserFactory, released_contrast_sets
from tests.workers import start_worker, stop, wait_for, worker_on_test_db


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_delivers_a_signed_event_retries_a_failure_and_refuses_an_internal_host(
    project, people, client_for, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.WEBHOOK_HOSTS = ["*"]
    staff = UserFactory(username="root", is_staff=True)
    env = worker_on_test_db(
        settings.MEDIA_ROOT, tmp_path / "var", WEBHOOK_RETRY_DELAYS="1,1", WEBHOOK_HOSTS="*"
    )
    with receiver((500, {}, b"busy"), (204, {}, b"")) as ci, receiver() as inside:
        url = f"/api/projects/{project.slug}/webhooks/"
        body = {"url": inside.url, "events": ["release.published"]}
        refused = client_for(people["admin"]).post(url, body, format="json")
        assert refused.status_code == 403 and "internal address" in refused.json()["detail"]
        body = {"url": ci.url, "events": ["release.published", "run.failed"]}
        secret = client_for(staff).post(url, body, format="json").json()["secret"]
        # Registered before its name resolved inside (the worker asks the rules again).
        Webhook.objects.create(
            project=project, url=inside.url, events=["release.published"],
            secret_encrypted=signing.seal(signing.new_secret()), created_by=people["admin"],
        )  # fmt: skip
        worker = start_worker(env, tmp_path / "worker.log")
        try:
            release = released_contrast_sets(project, people)
            wait_for(
                lambda: (
                    WebhookDelivery.objects.count() == 2
                    and not WebhookDelivery.objects.filter(status="pending").exists()
                ),
                90,
                "the worker's deliveries",
            )
        finally:
            log = stop(worker)
    sent = WebhookDelivery.objects.get(webhook__trusted=True)
    assert (sent.status, sent.attempts) == ("succeeded", 2), log[-3000:]
    assert [a.status_code for a in sent.attempt_rows.order_by("number")] == [500, 204]
    assert len(ci.received) == 2
    verifier = Verifier(secret)
    for request in ci.received:
        assert request.headers["webhook-id"] == sent.message_id
        event = verifier.verify(request.body, request.headers)
        assert event["type"] == "release.published"
        assert event["data"]["release"]["id"] == release.pk
    kept_out = WebhookDelivery.objects.get(webhook__trusted=False)
    assert (kept_out.status, kept_out.attempts) == ("failed", 1)
    assert "internal address" in kept_out.attempt_rows.get().error
    assert inside.received == []
