"""The Webhooks page, in the project's settings (admins): register a webhook (its secret shown
this once), remove one, send it a test event, and read each delivery's attempts and answers."""

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.errors import DomainError
from annotation.models import Project
from annotation.models.webhooks import EVENTS
from annotation.permissions import Role, project_for
from annotation.webhooks import events, selectors, services


class WebhookForm(forms.Form):
    url = forms.CharField(max_length=2000)
    events = forms.MultipleChoiceField(choices=[(event, event) for event in EVENTS])


@login_required
def webhooks_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    if request.method != "POST":
        return _render(request, project, WebhookForm(initial={"events": list(EVENTS)}), {})
    form = WebhookForm(request.POST)
    if not form.is_valid():
        return _render(request, project, form, {}, status=400)
    try:
        webhook, secret = services.webhook_create(
            project=project, actor=request.user, **form.cleaned_data
        )
    except DomainError as error:
        form.add_error("url" if error.field == "url" else None, error.message)
        return _render(request, project, form, {}, status=error.status)
    # Rendered, not redirected to: the secret is shown this once and kept nowhere readable.
    created = {"webhook": webhook, "secret": secret}
    return _render(request, project, WebhookForm(initial={"events": list(EVENTS)}), created)


def _render(
    request: HttpRequest,
    project: Project,
    form: WebhookForm,
    created: dict[str, Any],
    status: int = 200,
) -> HttpResponse:
    context = {
        "project": project,
        "form": form,
        "created": created,
        "events": EVENTS,
        "webhooks": selectors.webhooks_with_deliveries(project),
        "shown": selectors.ON_THE_PAGE,
        "attempts": 1 + len(settings.WEBHOOK_RETRY_DELAYS),
    }
    return render(request, "annotation/webhooks.html", context, status=status)


@login_required
@require_POST
def webhook_delete(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    webhook = selectors.webhook_of(project, pk)
    services.webhook_delete(webhook=webhook, actor=request.user)
    messages.success(request, f"Removed the webhook to {webhook.url}.")
    return redirect("webhooks", slug=slug)


@login_required
@require_POST
def webhook_test(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    webhook = selectors.webhook_of(project, pk)
    events.send_test(webhook)
    messages.success(request, f"A test event is on its way to {webhook.url}; reload to see it.")
    return redirect("webhooks", slug=slug)
