"""Webhooks' writes: registering one (its URL checked by the host rules served models follow),
removing one, the deliveries of an event, and one attempt of a delivery with its answer
recorded (README, "Webhooks")."""

from typing import Any
from urllib.parse import urlsplit

from cryptography.fernet import InvalidToken
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.errors import DomainError
from annotation.models import AuditLog, Project, Webhook, WebhookAttempt, WebhookDelivery
from annotation.models.webhooks import EVENTS, EXCERPT_CHARS
from annotation.outbound import hosts
from annotation.webhooks import sending, signing

Status = WebhookDelivery.Status
MAX_PER_PROJECT = 20


def clean_url(url: str, *, staff: bool) -> str:
    """The URL to keep, or the rule that refuses it: http(s), no credentials or fragment, and
    for a user who is not staff a host the operator allows (WEBHOOK_HOSTS)."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (a port out of range or not a number raises here)
    except ValueError:
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise DomainError(
            "url must be an http(s) address, such as https://ci.example.org/hook.", field="url"
        )
    if parts.username or parts.password or parts.fragment:
        raise DomainError("url holds no user, password or #fragment.", field="url")
    if not staff and (problem := host_check(url).problem):
        raise DomainError(problem, code="forbidden", field="url")
    return url


def host_check(url: str) -> hosts.Checked:
    return hosts.check(
        urlsplit(url).hostname or "",
        allowed=settings.WEBHOOK_HOSTS,
        setting="WEBHOOK_HOSTS",
        what="webhooks",
    )


def clean_events(events: list[str]) -> list[str]:
    unknown = sorted(set(events) - set(EVENTS))
    if unknown or not events:
        raise DomainError(
            f"events must be some of {', '.join(EVENTS)}"
            + (f"; not {', '.join(unknown)}." if unknown else "."),
            field="events",
        )
    return [event for event in EVENTS if event in events]


def webhook_create(
    *, project: Project, actor: Any, url: str, events: list[str]
) -> tuple[Webhook, str]:
    """The new webhook and its signing secret, which is shown this once."""
    staff = bool(getattr(actor, "is_staff", False))
    url, events = clean_url(url, staff=staff), clean_events(events)
    if Webhook.objects.filter(project=project).count() >= MAX_PER_PROJECT:
        raise DomainError(f"A project has at most {MAX_PER_PROJECT} webhooks.", code="conflict")
    secret = signing.new_secret()
    webhook = Webhook.objects.create(
        project=project,
        url=url,
        events=events,
        secret_encrypted=signing.seal(secret),
        trusted=staff,
        created_by=actor,
    )
    AuditLog.record(
        actor=actor, action="webhook_created", project=project, webhook=webhook.pk, url=url
    )
    return webhook, secret


def webhook_delete(*, webhook: Webhook, actor: Any) -> None:
    AuditLog.record(
        actor=actor,
        action="webhook_deleted",
        project=webhook.project,
        webhook=webhook.pk,
        url=webhook.url,
    )
    webhook.delete()


def deliveries_make(
    hooks: list[Webhook], event: str, data: dict[str, Any]
) -> list[WebhookDelivery]:
    """An event's delivery to each of `hooks`, with its body: {"type", "timestamp", "data"}."""
    payload = {"type": event, "timestamp": timezone.now().isoformat(), "data": data}
    return WebhookDelivery.objects.bulk_create(
        WebhookDelivery(
            webhook=hook, message_id=signing.new_message_id(), event=event, payload=payload
        )
        for hook in hooks
    )


def delivery_attempt(delivery_id: int, number: int) -> int | None:
    """Make attempt `number` of a delivery and record it; the seconds to wait before the next
    attempt, or None when there is none (it succeeded, failed for good, or this attempt was
    made already: a message delivered twice)."""
    delivery = WebhookDelivery.objects.select_related("webhook").filter(pk=delivery_id).first()
    if delivery is None or delivery.status != Status.PENDING or delivery.attempts >= number:
        return None
    answer, final = _attempt(delivery)
    delays = settings.WEBHOOK_RETRY_DELAYS
    done = final or answer.succeeded or number > len(delays)
    status = Status.SUCCEEDED if answer.succeeded else Status.FAILED if done else Status.PENDING
    with transaction.atomic():
        WebhookAttempt.objects.create(
            delivery=delivery,
            number=number,
            sent_at=timezone.now(),
            status_code=answer.status_code,
            body_excerpt=answer.body_excerpt,
            error=answer.error,
        )
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            attempts=number, status=status, finished_at=timezone.now() if done else None
        )
    return None if done else delays[number - 1]


def _attempt(delivery: WebhookDelivery) -> tuple[sending.Answer, bool]:
    """The answer of one attempt, and whether no later attempt could mend it (a host the
    rules refuse, a secret that cannot be read). A webhook that staff did not register is
    checked again, and reached at the address checked."""
    webhook = delivery.webhook
    checked = hosts.Checked("") if webhook.trusted else host_check(webhook.url)
    if checked.problem:
        return sending.Answer(None, "", checked.problem[:EXCERPT_CHARS]), True
    try:
        secret = signing.unseal(webhook.secret_encrypted)
    except InvalidToken:
        said = "Its secret cannot be read: MODEL_KEYS_SECRET (or SECRET_KEY) changed since."
        return sending.Answer(None, "", said), True
    answer = sending.post(
        webhook.url,
        secret=secret,
        message_id=delivery.message_id,
        payload=delivery.payload,
        address=checked.address,
    )
    return answer, False
