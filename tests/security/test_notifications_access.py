"""Notifications, in the permission matrix's terms (test_permission_matrix.py lists them as
filtered per user): anybody signed in reaches their own inbox and choices, the anonymous are
refused before the payload, and no user reads or marks another's."""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Notification
from annotation.notifications.services import notify

pytestmark = pytest.mark.django_db

# Every method of every endpoint and page of notifications (the settings are the inbox's form).
CALLS = (("api-notifications", "get"), ("api-notifications-read", "post"),
         ("api-notification-preferences", "get"), ("api-notification-preferences", "put"),
         ("notifications", "get"), ("notifications-read", "post"),
         ("notifications-preferences", "post"))  # fmt: skip


def test_the_anonymous_are_refused_and_every_user_gets_in(people, staff):  # type: ignore[no-untyped-def]
    users = {None: None, **people, "staff": staff}
    for name, method in CALLS:
        url = reverse(name)
        api = url.startswith("/api/")
        for role, user in users.items():
            client = APIClient() if api else Client()
            if user is not None:
                client.force_login(user)
            status = getattr(client, method)(url).status_code
            if user is None:
                assert status == (401 if api else 302), (name, status)
                if not api:
                    assert getattr(client, method)(url)["Location"].startswith("/accounts/login/")
            else:
                # in, whatever the empty payload: read/'s 400 asks for ids
                assert status not in (401, 403, 404) and status < 500, (name, role, status)


def test_nobody_reads_or_marks_anothers(project, people, staff):  # type: ignore[no-untyped-def]
    notify([people["admin"].pk], project, "import.finished", "The admin's own.", "/p/x/")
    theirs = Notification.objects.get(user=people["admin"])
    for user in (people["outsider"], people["validator"], people["expert"], staff):
        api = APIClient()
        api.force_login(user)
        assert api.get("/api/notifications/").json()["count"] == 0
        api.post("/api/notifications/read/", {"ids": [theirs.pk]}, format="json")
        page = Client()
        page.force_login(user)
        assert "The admin's own." not in page.get("/notifications/").content.decode()
        opened = page.post("/notifications/read/", {"id": theirs.pk, "open": "1"})
        assert opened["Location"] == "/notifications/"  # not the admin's page
    theirs.refresh_from_db()
    assert theirs.read_at is None
