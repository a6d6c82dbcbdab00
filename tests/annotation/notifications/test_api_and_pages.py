"""The inbox over the API and on its page: each user reads and marks their own alone, the
header counts the unread, and each user chooses the kinds they get and the e-mail."""

import pytest
from django.test import Client

from annotation.models import Notification, NotificationPreference
from annotation.models.notifications import KINDS
from annotation.notifications.services import notify

pytestmark = pytest.mark.django_db


@pytest.fixture
def inboxes(project, people):  # type: ignore[no-untyped-def]
    """Three for the expert (the oldest read), one for the admin."""
    for n in range(3):
        notify([people["expert"].pk], project, "import.finished", f"Import {n} done.", "/x/")
    notify([people["admin"].pk], project, "import.finished", "The admin's.", "")
    Notification.objects.filter(text="Import 0 done.").update(read_at="2026-01-01T00:00Z")
    return people


def test_the_api_lists_ones_own_newest_first(inboxes, client_for):  # type: ignore[no-untyped-def]
    body = client_for(inboxes["expert"]).get("/api/notifications/").json()
    assert body["count"] == 3
    assert [(r["text"], r["read"]) for r in body["results"]] == [
        ("Import 2 done.", False),
        ("Import 1 done.", False),
        ("Import 0 done.", True),
    ]
    assert body["results"][0]["project"] == "sentiment"
    unread = client_for(inboxes["expert"]).get("/api/notifications/?unread=true").json()
    assert unread["count"] == 2
    assert client_for(inboxes["validator"]).get("/api/notifications/").json()["count"] == 0
    assert client_for(inboxes["expert"]).get("/api/notifications/?unread=maybe").status_code == 400
    assert client_for().get("/api/notifications/").status_code == 401


def test_marking_read_through_the_api_touches_ones_own_alone(inboxes, client_for):  # type: ignore[no-untyped-def]
    theirs = Notification.objects.get(user=inboxes["admin"]).pk
    mine = Notification.objects.get(text="Import 1 done.").pk
    client = client_for(inboxes["expert"])
    answer = client.post("/api/notifications/read/", {"ids": [theirs, mine]}, format="json")
    assert answer.status_code == 200
    assert answer.json() == {"marked": 1, "unread": 1}
    assert Notification.objects.get(pk=theirs).read_at is None
    nothing = client.post("/api/notifications/read/", {}, format="json")
    assert nothing.status_code == 400 and nothing.json() == {"ids": ["Give ids, or all: true."]}
    answer = client.post("/api/notifications/read/", {"all": True}, format="json")
    assert answer.json() == {"marked": 1, "unread": 0}
    assert Notification.objects.get(pk=theirs).read_at is None


def test_preferences_over_the_api(people, client_for):  # type: ignore[no-untyped-def]
    client = client_for(people["expert"])
    assert client.get("/api/notifications/preferences/").json() == {
        "kinds": list(KINDS),
        "email": False,
    }
    chosen = {"kinds": ["release.published", "run.finished"], "email": True}
    answer = client.put("/api/notifications/preferences/", chosen, format="json")
    assert answer.status_code == 200
    assert client.get("/api/notifications/preferences/").json() == {
        "kinds": ["run.finished", "release.published"],  # in KINDS' order
        "email": True,
    }
    bad = client.put("/api/notifications/preferences/", {"kinds": ["nope"], "email": True})
    assert bad.status_code == 400
    saved = NotificationPreference.objects.get(user=people["expert"])
    assert saved.kinds == ["run.finished", "release.published"]


def test_the_header_counts_the_unread_and_the_page_marks_them_read(inboxes, project):  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(inboxes["expert"])
    page = client.get("/notifications/").content.decode()
    assert '<span class="unread-badge" id="unread-count">2</span>' in page
    assert "Import 2 done." in page and "(2 unread)" in page
    one = Notification.objects.get(text="Import 2 done.")
    opened = client.post("/notifications/read/", {"id": one.pk, "open": "1"})
    assert opened.status_code == 302 and opened["Location"] == "/x/"
    page = client.get("/notifications/").content.decode()
    assert '<span class="unread-badge" id="unread-count">1</span>' in page
    client.post("/notifications/read/", {"all": "1"})
    page = client.get(f"/p/{project.slug}/mine/").content.decode()
    assert 'id="unread-count"' not in page and 'aria-label="Notifications: none unread"' in page
    assert client.post("/notifications/read/", {"id": "x"}).status_code == 302  # no 500
    other = Notification.objects.get(user=inboxes["admin"])
    client.post("/notifications/read/", {"id": other.pk})
    assert Notification.objects.get(pk=other.pk).read_at is None


def test_the_page_saves_the_choices(people):  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(people["expert"])
    client.post("/notifications/preferences/", {"kinds": ["mention"], "email": "on"})
    saved = NotificationPreference.objects.get(user=people["expert"])
    assert (saved.kinds, saved.email) == (["mention"], True)
    page = client.get("/notifications/").content.decode()
    assert 'value="mention" checked' in page and 'value="run.finished">' in page
    refused = client.post("/notifications/preferences/", {"kinds": ["<b>nope</b>"]})
    assert refused.status_code == 302
    assert NotificationPreference.objects.get(user=people["expert"]).kinds == ["mention"]
