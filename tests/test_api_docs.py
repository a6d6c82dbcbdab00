"""docs/api.md's table of endpoints against the URL conf: every route of the API is in it, and
it names no route the API lacks (it missed six: sample, validators, qualify, an import job's
cancel and retry, a release's detail and diff)."""

import re
from pathlib import Path

from django.urls import URLPattern, URLResolver, get_resolver

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER = re.compile(r"<[^>]+>|\{[^}]+\}")


def api_routes(patterns: list, prefix: str = "") -> set[str]:
    """Each route of the URL conf under /api/, its parameters written `{}`."""
    found: set[str] = set()
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            found |= api_routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern) and route.startswith("api/"):
            found.add(PLACEHOLDER.sub("{}", "/" + route))
    return found


def documented_routes(text: str) -> set[str]:
    """The paths in the first cell of each row of the Endpoints table. `…/x/` continues the
    cell's last full path: from its own first segment where that path has it, else after it."""
    table = text.split("## Endpoints", 1)[1].split("\n\n", 2)[1]
    found: set[str] = set()
    for row in table.splitlines()[2:]:
        full: list[str] = []
        for code in re.findall(r"`([^`]+)`", row.split(" | ")[0]):
            path = code.split()[-1].split("?")[0]
            if path.startswith("/api/"):
                full = segments = path.strip("/").split("/")
            elif path.startswith("…/") and full:
                tail = path[2:].strip("/").split("/")
                segments = (full[: full.index(tail[0])] if tail[0] in full else full) + tail
            else:
                continue
            found.add(PLACEHOLDER.sub("{}", "/" + "/".join(segments) + "/"))
    return found


def matches(route: str, documented: str) -> bool:
    """A route's parameter matches a documented literal (`<str:action>`: `…/cancel/`)."""
    ours, theirs = route.split("/"), documented.split("/")
    if len(ours) != len(theirs):
        return False
    return all(a in ("{}", b) for a, b in zip(ours, theirs, strict=True))


def test_the_api_table_names_every_route_and_no_other():
    documented = documented_routes((ROOT / "docs" / "api.md").read_text())
    routes = api_routes(get_resolver().url_patterns)
    assert sorted(r for r in routes if not any(matches(r, d) for d in documented)) == []
    assert sorted(d for d in documented if not any(matches(r, d) for r in routes)) == []
