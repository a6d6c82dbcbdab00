"""The e-mailed digest: one e-mail at most an hour per user who chose e-mail, of their unread
notifications of the kinds they want, through Django's SMTP backend to a real SMTP server
(aiosmtpd) started here on 127.0.0.1."""

import socket
from datetime import timedelta
from email import message_from_bytes
from email.message import Message

import pytest
from aiosmtpd.controller import Controller
from django.utils import timezone

from annotation.models import Notification
from annotation.notifications.services import digests_send, notify, preferences_save
from annotation.notifications.tasks import send_digests_task

pytestmark = pytest.mark.django_db


class Inbox:
    """What the SMTP server received: each message, with its envelope's recipients."""

    def __init__(self) -> None:
        self.received: list[tuple[list[str], Message]] = []

    async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]
        self.received.append((list(envelope.rcpt_tos), message_from_bytes(envelope.content)))
        return "250 Message accepted for delivery"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def smtp(settings):  # type: ignore[no-untyped-def]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", controller.port
    settings.EMAIL_USE_TLS = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.SITE_URL = "https://contrast.example.org"
    yield inbox
    controller.stop()


def body_of(message: Message) -> str:
    payload = message.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode().replace("\r\n", "\n")  # SMTP sends its lines as CRLF


def test_one_digest_an_hour_of_the_unread_wanted_ones(project, people, smtp):  # type: ignore[no-untyped-def]
    expert = people["expert"]
    expert.email = "erin@example.org"
    expert.save()
    preferences_save(user=expert, kinds=["import.finished", "run.finished"], email=True)
    notify([expert.pk], project, "import.finished", "Your import in P succeeded.", "/p/x/1/")
    notify([expert.pk], project, "run.finished", "Your run of m in P failed.", "")
    notify([expert.pk], project, "import.finished", "Already read.", "")
    Notification.objects.filter(text="Already read.").update(read_at=timezone.now())
    # The validator gets notifications in the inbox alone (no e-mail chosen).
    people["validator"].email = "victor@example.org"
    people["validator"].save()
    notify([people["validator"].pk], project, "release.published", "Release 1.0.", "")

    assert send_digests_task.apply().get() == 1
    ((to, message),) = smtp.received
    assert to == ["erin@example.org"]
    assert message["Subject"] == "ContrastLab: 2 new notifications"
    text = body_of(message)
    assert "- Your import in P succeeded.\n  https://contrast.example.org/p/x/1/" in text
    assert "- Your run of m in P failed." in text
    assert "Already read." not in text
    assert "https://contrast.example.org/notifications/" in text

    # Within the hour: nothing more, whatever arrives.
    notify([expert.pk], project, "run.finished", "Your run of n in P succeeded.", "")
    assert send_digests_task.apply().get() == 0
    assert len(smtp.received) == 1
    # An hour later: the new one alone.
    assert digests_send(timezone.now() + timedelta(minutes=61)) == 1
    _, later = smtp.received[1]
    assert later["Subject"] == "ContrastLab: 1 new notification"
    assert "Your run of n in P succeeded." in body_of(later)
    assert "Your run of m in P failed." not in body_of(later)
    # Nothing new: no e-mail.
    assert digests_send(timezone.now() + timedelta(hours=3)) == 0
    assert len(smtp.received) == 2


def test_no_digest_without_an_address_or_with_e_mail_off(project, people, smtp):  # type: ignore[no-untyped-def]
    admin, expert = people["admin"], people["expert"]
    admin.email = ""
    admin.save()
    preferences_save(user=admin, kinds=["import.finished"], email=True)
    expert.email = "erin@example.org"
    expert.save()
    preferences_save(user=expert, kinds=["import.finished"], email=False)
    notify([admin.pk, expert.pk], project, "import.finished", "Done.", "")
    assert send_digests_task.apply().get() == 0
    assert smtp.received == []
