"""Which servers a served model may name (docs/models.md, docs/security.md): staff any;
everyone else a host the operator allows in SERVED_MODEL_HOSTS, where "*" allows any host
whose addresses are all public. Checked when the model is registered, and again on the worker
before each request, since a name may resolve elsewhere later."""

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

from annotation.errors import DomainError


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
    """Why a user who is not staff may not name `host` ("" if they may)."""
    name = host.lower().rstrip(".")
    allowed = [entry.lower() for entry in settings.SERVED_MODEL_HOSTS]
    for entry in allowed:
        if name == entry or (entry.startswith("*.") and name.endswith(entry[1:])):
            return ""
    if "*" not in allowed:
        return f"{host} is not among the hosts this site allows for served models; ask staff."
    try:
        addresses = {str(info[4][0]) for info in socket.getaddrinfo(name, None)}
    except (socket.gaierror, UnicodeError):
        return f"{host} does not resolve to an address."
    if all(_public(address) for address in addresses):
        return ""
    return (
        f"{host} is an internal address: only staff may name one, or the operator may allow "
        "it in SERVED_MODEL_HOSTS."
    )


# IPv6 forms that embed or reach an IPv4 address, and the deprecated site-local block, which
# Python's ipaddress calls global: NAT64 (RFC 6052, 8215), 6to4 (RFC 3056), IPv4-translated
# (RFC 2765), IPv4-compatible (RFC 4291), Teredo (RFC 4380) and site-local (RFC 3879).
BLOCKS = "64:ff9b::/96 64:ff9b:1::/48 2002::/16 ::ffff:0:0:0/96 ::/96 2001::/32 fec0::/10"
EMBEDDING = [ipaddress.ip_network(block) for block in BLOCKS.split()]


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped:
            ip = ip.ipv4_mapped
        elif any(ip in block for block in EMBEDDING):
            return False
    return ip.is_global and not ip.is_multicast
