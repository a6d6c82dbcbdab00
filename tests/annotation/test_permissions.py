"""The permission matrix: every endpoint and page by anonymous, outsider, validator, expert, admin.

Outsiders get 404 for objects of projects they have no role in; members lacking a role get 403.
"""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", "outsider", "validator", "expert", "admin"]

# (method, path, payload, expected status per role, in ROLES order)
API = [
    ("get", "/api/projects/sentiment/", None, [401, 404, 200, 200, 200]),
    ("patch", "/api/projects/sentiment/", {"name": "Renamed"}, [401, 404, 403, 403, 200]),
    ("get", "/api/projects/sentiment/members/", None, [401, 404, 403, 403, 200]),
    (
        "post",
        "/api/projects/sentiment/members/",
        {"username": "erin", "roles": ["expert", "validator"]},
        [401, 404, 403, 403, 200],
    ),
    ("post", "/api/projects/sentiment/examples/import/", {}, [401, 404, 403, 403, 400]),
    ("get", "/api/projects/nonexistent/", None, [401, 404, 404, 404, 404]),
    ("get", "/api/projects/sentiment/examples/", None, [401, 404, 403, 200, 200]),
    ("post", "/api/projects/sentiment/examples/sample/", {}, [401, 404, 403, 409, 409]),
    ("post", "/api/projects/sentiment/examples/none/claim/", {}, [401, 404, 403, 404, 404]),
    ("get", "/api/projects/sentiment/perturbations/", None, [401, 404, 403, 200, 200]),
    ("post", "/api/projects/sentiment/perturbations/", {}, [401, 404, 403, 400, 400]),
    ("get", "/api/projects/sentiment/perturbations/999/", None, [401, 404, 403, 404, 404]),
    ("get", "/api/projects/sentiment/validation/next/", None, [401, 404, 204, 403, 403]),
    # A vote is read before its item is locked: a well-formed one, so that the item is sought.
    (
        "post",
        "/api/projects/sentiment/validation/999/vote/",
        {"label": "positive"},
        [401, 404, 404, 403, 403],
    ),
    ("get", "/api/projects/sentiment/stats/", None, [401, 404, 403, 403, 200]),
    ("get", "/api/projects/sentiment/validators/", None, [401, 404, 403, 403, 200]),
    ("post", "/api/projects/sentiment/validators/erin/", {}, [401, 404, 403, 403, 400]),
    ("post", "/api/projects/sentiment/adjudicate/999/", {}, [401, 404, 403, 403, 404]),
    ("post", "/api/projects/sentiment/import/votes/", {}, [401, 404, 403, 403, 400]),
    ("post", "/api/projects/sentiment/import/sets/", {}, [401, 404, 403, 403, 400]),
    ("get", "/api/projects/sentiment/releases/", None, [401, 404, 403, 403, 200]),
    ("post", "/api/projects/sentiment/releases/", {}, [401, 404, 403, 403, 400]),
]

PAGES = [
    ("/p/sentiment/", [302, 404, 200, 200, 200]),
    ("/p/sentiment/import/", [302, 404, 403, 403, 200]),
    ("/p/sentiment/members/", [302, 404, 403, 403, 200]),
    ("/p/sentiment/pivots/", [302, 404, 403, 200, 200]),
    ("/p/sentiment/mine/", [302, 404, 403, 200, 200]),
    ("/p/sentiment/validate/", [302, 404, 200, 403, 403]),
    ("/p/sentiment/validators/", [302, 404, 403, 403, 200]),
    ("/p/sentiment/disputes/", [302, 404, 403, 403, 200]),
    ("/p/sentiment/releases/", [302, 404, 403, 403, 200]),
    ("/p/sentiment/import/sets/", [302, 404, 403, 403, 200]),
]


@pytest.mark.parametrize(("method", "path", "payload", "expected"), API)
def test_api_permission_matrix(people, client_for, method, path, payload, expected):
    for role, status in zip(ROLES, expected, strict=True):
        client = client_for(people.get(role))
        fmt = "multipart" if "/import/" in path else "json"
        response = getattr(client, method)(path, payload, format=fmt)
        assert response.status_code == status, (role, method, path, response.content[:200])


@pytest.mark.parametrize(("path", "expected"), PAGES)
def test_page_permission_matrix(people, path, expected):
    for role, status in zip(ROLES, expected, strict=True):
        client = Client()
        if role != "anonymous":
            client.force_login(people[role])
        response = client.get(path)
        assert response.status_code == status, (role, path)
        if status == 302:
            assert response["Location"].startswith("/accounts/login/")


def test_project_list_shows_only_projects_with_a_role(people, client_for):
    def names(user):  # type: ignore[no-untyped-def]
        return [p["slug"] for p in client_for(user).get("/api/projects/").json()["results"]]

    assert names(people["expert"]) == ["sentiment"]
    assert names(people["outsider"]) == ["elsewhere"]


def test_staff_act_as_admin_everywhere(people, staff, client_for):
    response = client_for(staff).patch("/api/projects/sentiment/", {"name": "X"}, format="json")
    assert response.status_code == 200
    assert response.json()["roles"] == ["admin"]


def test_session_api_calls_need_csrf(people):
    client = Client(enforce_csrf_checks=True)
    client.force_login(people["admin"])
    response = client.patch(
        "/api/projects/sentiment/", {"name": "X"}, content_type="application/json"
    )
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
