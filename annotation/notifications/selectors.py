"""A user's notifications as the inbox, the header's count and the API read them: their own
alone, newest first."""

from typing import Any

from django.db.models import QuerySet

from annotation.models import Notification

UNREAD_SHOWN_MAX = 99  # the header says "99+" past it


def inbox(user: Any, *, unread_only: bool = False) -> QuerySet[Notification]:
    rows = Notification.objects.filter(user=user).select_related("project")
    if unread_only:
        rows = rows.filter(read_at=None)
    return rows.order_by("-id")


def unread_count(user: Any) -> int:
    """The user's unread notifications, counted up to UNREAD_SHOWN_MAX + 1."""
    if not user.is_authenticated:
        return 0
    unread = Notification.objects.filter(user=user, read_at=None)
    return len(unread.values_list("pk", flat=True)[: UNREAD_SHOWN_MAX + 1])
