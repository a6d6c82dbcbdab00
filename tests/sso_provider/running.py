"""The test provider (serve.py) in its own process, for as long as a `with` block lasts."""

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from config import sso

ROOT = Path(__file__).resolve().parent.parent.parent
CLIENT_ID = "contrastlab"
CLIENT_SECRET = "a secret the provider and the site share"
PEOPLE = [
    {"username": "ada", "password": "ada-pw", "email": "ada@lab.example"},
    {"username": "bob", "password": "bob-pw", "email": "bob@lab.example", "verified": False},
    {"username": "carol.k", "password": "carol-pw", "email": "Carol@Lab.example"},
    {"username": "dan", "password": "dan-pw", "email": "dan@lab.example"},
]


@contextmanager
def provider(
    folder: Path, site: str, people: list[dict[str, Any]], logout: bool = True
) -> Iterator[str]:
    """A provider that knows `people` and one client, ContrastLab at `site` (its scheme and
    host), and (`logout`) signs them out when the site asks: its issuer."""
    config = {
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "redirect_uri": f"{site}/accounts/sso/callback/",
        "post_logout_redirect_uri": f"{site}/accounts/login/",
        "people": people,
    }
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")},
        "PROVIDER_DB": str(folder / "provider.sqlite3"),
        "PYTHONPATH": str(ROOT),
        "PROVIDER_LOGOUT": "1" if logout else "0",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.sso_provider.serve", json.dumps(config)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        issuer = process.stdout.readline().strip()
        if not issuer.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the test provider did not start (exit {process.wait()}).")
        yield issuer
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def issuer(live_server, tmp_path_factory):  # type: ignore[no-untyped-def]
    """A provider for the test module, knowing PEOPLE."""
    with provider(tmp_path_factory.mktemp("provider"), on_ip(live_server.url), PEOPLE) as issuer:
        yield issuer


@pytest.fixture
def site(settings, issuer, live_server, transactional_db):  # type: ignore[no-untyped-def]
    """The live server, signing in through `issuer` as "Lab ID": its address, on the same host
    as the provider (another port), as a lab's own machine would have them: browsers share
    cookies across ports."""
    settings.OIDC_ISSUER = issuer
    settings.OIDC_RP_CLIENT_ID = CLIENT_ID
    settings.OIDC_RP_CLIENT_SECRET = CLIENT_SECRET
    settings.OIDC_PROVIDER_NAME = "Lab ID"
    sso.forget_provider()
    yield on_ip(live_server.url)
    sso.forget_provider()


def on_ip(url: str) -> str:
    return url.replace("//localhost:", "//127.0.0.1:")
