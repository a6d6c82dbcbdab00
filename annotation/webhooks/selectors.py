"""Webhooks' reads: a project's webhooks, and a webhook's deliveries with their attempts."""

from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404

from annotation.models import Project, Webhook, WebhookAttempt, WebhookDelivery

# The newest deliveries of each webhook the page shows (the API pages through them all).
ON_THE_PAGE = 10


def webhook_of(project: Project, pk: int) -> Webhook:
    return get_object_or_404(Webhook, project=project, pk=pk)


def deliveries_of(webhook: Webhook) -> QuerySet[WebhookDelivery]:
    attempts = Prefetch("attempt_rows", queryset=WebhookAttempt.objects.order_by("number"))
    return webhook.deliveries.order_by("-pk").prefetch_related(attempts)


def webhooks_with_deliveries(project: Project) -> list[Webhook]:
    """The project's webhooks, each with `recent`: its newest deliveries and their attempts."""
    hooks = list(Webhook.objects.filter(project=project).order_by("pk"))
    for hook in hooks:
        hook.recent = list(deliveries_of(hook)[:ON_THE_PAGE])  # type: ignore[attr-defined]
    return hooks
