"""Which hosts a user who is not staff may make the product reach (docs/security.md): one the
operator allows by name in a setting's list, where "*" allows any host whose addresses are
all public. Served models (SERVED_MODEL_HOSTS) and webhooks (WEBHOOK_HOSTS) ask it when one is
registered, and again on the worker before each request, since a name may resolve elsewhere
later. A webhook's request then goes to the very address checked (`Checked.address`), so that
a name answering a public address to the check and an internal one to the connection (DNS
rebinding) reaches nothing inside."""

import ipaddress
import socket
from dataclasses import dataclass


@dataclass(frozen=True)
class Checked:
    problem: str  # why the host is refused; "" if it is not
    address: str | None = None  # a public address it resolved to, where "*" allowed it


def refusal(host: str, *, allowed: list[str], setting: str, what: str) -> str:
    """Why a user who is not staff may not name `host` for `what` ("" if they may): `allowed`
    is the operator's list, read from the setting named `setting`."""
    return check(host, allowed=allowed, setting=setting, what=what).problem


def check(host: str, *, allowed: list[str], setting: str, what: str) -> Checked:
    name = host.lower().rstrip(".")
    entries = [entry.lower() for entry in allowed]
    for entry in entries:
        if name == entry or (entry.startswith("*.") and name.endswith(entry[1:])):
            return Checked("")
    if "*" not in entries:
        return Checked(f"{host} is not among the hosts this site allows for {what}; ask staff.")
    try:
        addresses = sorted({str(info[4][0]) for info in socket.getaddrinfo(name, None)})
    except (socket.gaierror, UnicodeError):
        return Checked(f"{host} does not resolve to an address.")
    if addresses and all(_public(address) for address in addresses):
        return Checked("", addresses[0])
    return Checked(
        f"{host} is an internal address: only staff may name one, or the operator may allow "
        f"it in {setting}."
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
