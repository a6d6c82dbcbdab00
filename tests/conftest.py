import os
import socket
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from tests.factories import (
    ProjectFactory,
    TagFactory,
    UserFactory,
    member,
    released_contrast_sets,
)

# The single sign-on tests' OpenID Connect provider, as fixtures: `issuer` and `site`.
pytest_plugins = ["tests.sso_provider.running"]

# Playwright's sync API runs an event loop in the test thread; Django's ORM would refuse it.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"


def _reachable(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def pytest_sessionstart(session: pytest.Session) -> None:
    missing = [
        name for name, port in (("PostgreSQL", 5432), ("Redis", 6379)) if not _reachable(port)
    ]
    if missing:
        pytest.exit(f"{' and '.join(missing)} must run on 127.0.0.1 for the tests (see README).", 1)


@pytest.fixture(autouse=True)
def models_dir(settings, tmp_path_factory):  # type: ignore[no-untyped-def]
    """The tiny models the tests build live in pytest's temporary folders: that is MODELS_DIR,
    the only place a worker loads local models from."""
    settings.MODELS_DIR = tmp_path_factory.getbasetemp()


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared NLP data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture
def project(db):  # type: ignore[no-untyped-def]
    project = ProjectFactory(slug="sentiment")
    TagFactory(project=project, name="negation")
    TagFactory(project=project, name="intensity")
    return project


@pytest.fixture
def people(project):  # type: ignore[no-untyped-def]
    """One user per role in `project`, plus an outsider who belongs to another project."""
    other = ProjectFactory(slug="elsewhere")
    return {
        "admin": member(project, "alice", "admin"),
        "expert": member(project, "erin", "expert"),
        "validator": member(project, "victor", "validator"),
        "outsider": member(other, "olga", "admin", "expert", "validator"),
    }


@pytest.fixture
def client_for():  # type: ignore[no-untyped-def]
    def make(user=None):  # type: ignore[no-untyped-def]
        client = APIClient()
        if user is not None:
            client.force_authenticate(user)
        return client

    return make


@pytest.fixture
def staff(db):  # type: ignore[no-untyped-def]
    return UserFactory(username="root", is_staff=True, is_superuser=True)


@pytest.fixture
def released(project, people, settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"
    return released_contrast_sets(project, people)
