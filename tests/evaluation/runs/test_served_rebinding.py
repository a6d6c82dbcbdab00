"""DNS rebinding against a served model (docs/security.md): a name that answers a public address
to the worker's check and an internal one to any later lookup. The worker's requests go to the
address checked, so the server inside never hears them."""

import socket
from urllib.parse import urlsplit

import pytest

from annotation.outbound.lines import Unanswered
from evaluation.models import ModelSpec
from evaluation.runs.endpoint import served_client
from tests.annotation.webhooks.receiver import receiver

pytestmark = pytest.mark.django_db


def rebinding_resolver(monkeypatch, name: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The resolver, the one thing faked (it is outside the product): `name` is a public
    address to its first lookup and 127.0.0.1 to every later one. Returns the lookups."""
    real, lookups = socket.getaddrinfo, []

    def rebinding(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        if host != name:
            return real(host, *args, **kwargs)
        lookups.append(host)
        return real("93.184.215.14" if len(lookups) == 1 else "127.0.0.1", *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    return lookups


def test_a_name_that_rebinds_inside_is_reached_at_the_address_checked(
    project, settings, monkeypatch
):
    settings.SERVED_MODEL_HOSTS = ["*"]
    with receiver((200, {}, b'{"choices": []}')) as inside:
        port = urlsplit(inside.url).port
        spec = ModelSpec.objects.create(
            project=project, name="served", kind="openai-compatible", source="m",
            base_url=f"http://rebind.example:{port}/v1", trusted=False, timeout=1,
        )  # fmt: skip
        lookups = rebinding_resolver(monkeypatch, "rebind.example")
        client = served_client(spec)
        try:
            client.exchange("POST", "/completions", {"prompt": "x"}, deadline=1)
        except Unanswered:
            pass
        finally:
            client.line.close()
    assert inside.received == []
    assert lookups == ["rebind.example"]  # the check's lookup alone
