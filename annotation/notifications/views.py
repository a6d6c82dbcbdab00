"""The Notifications page (the inbox the header's count opens): a user's own notifications,
newest first, each marked read by its button or all at once, and their choices of which
kinds come and whether by e-mail."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.models import NotificationPreference
from annotation.models.notifications import KINDS
from annotation.notifications import selectors, services

PAGE_SIZE = 50


class PreferenceForm(forms.Form):
    kinds = forms.MultipleChoiceField(
        choices=list(KINDS.items()), required=False, widget=forms.CheckboxSelectMultiple
    )
    email = forms.BooleanField(required=False)


@login_required
def inbox_page(request: HttpRequest) -> HttpResponse:
    unread_only = request.GET.get("show") == "unread"
    rows = selectors.inbox(request.user, unread_only=unread_only)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    preference = NotificationPreference.of(request.user)
    form = PreferenceForm(initial={"kinds": preference.kinds, "email": preference.email})
    context = {
        "page": page,
        "unread_only": unread_only,
        "form": form,
        "has_email": bool(request.user.email),  # type: ignore[union-attr]
        "unread": selectors.inbox(request.user, unread_only=True).count(),
    }
    return render(request, "annotation/notifications.html", context)


@login_required
@require_POST
def mark_read(request: HttpRequest) -> HttpResponse:
    """Mark one (`id`) or all (`all`) of the user's notifications read, then back to the inbox,
    or (`open`) on to the page the notification concerns."""
    if request.POST.get("all"):
        marked = services.mark_read(user=request.user, ids=None)
        messages.success(request, f"{marked} marked read.")
        return redirect("notifications")
    try:
        ids = [int(request.POST.get("id", ""))]
    except ValueError:
        messages.error(request, "Which notification? None was marked read.")
        return redirect("notifications")
    services.mark_read(user=request.user, ids=ids)
    row = selectors.inbox(request.user).filter(pk=ids[0]).first()
    if row is not None and row.url and request.POST.get("open"):
        return redirect(row.url)
    return redirect("notifications")


@login_required
@require_POST
def preferences(request: HttpRequest) -> HttpResponse:
    form = PreferenceForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Those choices were not understood; nothing changed.")
        return redirect("notifications")
    services.preferences_save(user=request.user, **form.cleaned_data)
    messages.success(request, "Your notification choices are saved.")
    return redirect("notifications")
