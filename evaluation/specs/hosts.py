"""Which servers a served model may name (docs/models.md, docs/security.md): staff any;
everyone else a host the operator allows in SERVED_MODEL_HOSTS, where "*" allows any host
whose addresses are all public (annotation/outbound/hosts.py, which webhooks share). Checked
when the model is registered, and again on the worker before each request, since a name may
resolve elsewhere later; the worker connects to the address its check found, never to what the
name resolves to a moment later (DNS rebinding)."""

from urllib.parse import urlsplit

from django.conf import settings

from annotation.errors import DomainError
from annotation.outbound import hosts


def clean_base_url(url: str, *, staff: bool) -> str:
    """The base URL to keep (without a trailing slash), or the rule that refuses it."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018  (a port out of range or not a number raises here)
    except ValueError:
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise DomainError(
            "base_url must be the server's http(s) address, such as http://host:8000/v1.",
            field="base_url",
        )
    if parts.username or parts.password or parts.query or parts.fragment:
        raise DomainError(
            "base_url holds only the scheme, host, port and path; give a key as api_key.",
            field="base_url",
        )
    if not staff and (problem := refusal(parts.hostname)):
        raise DomainError(problem, code="forbidden", field="base_url")
    return url.strip().rstrip("/")


def refusal(host: str) -> str:
    """Why a user who is not staff may not name `host` for a served model ("" if they may)."""
    return checked(host).problem


def checked(host: str) -> hosts.Checked:
    """The host rules' answer for `host`, with the public address to connect to where "*"
    allowed it (a name allowed by the operator is connected to by name)."""
    return hosts.check(
        host,
        allowed=settings.SERVED_MODEL_HOSTS,
        setting="SERVED_MODEL_HOSTS",
        what="served models",
    )
