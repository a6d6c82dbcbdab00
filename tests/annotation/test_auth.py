import re

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.factories import ProjectFactory, UserFactory, member

pytestmark = pytest.mark.django_db


def test_token_from_username_and_password_authenticates_api_calls(people):
    client = APIClient()
    response = client.post(
        "/api/auth/token/", {"username": "erin", "password": "pw"}, format="json"
    )
    assert response.status_code == 200
    token = response.json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/projects/sentiment/").status_code == 200
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    response = client.get("/api/projects/sentiment/")
    assert response.status_code == 401
    assert response.json()["detail"] == "Invalid token."
    people["expert"].is_active = False
    people["expert"].save()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    response = client.get("/api/projects/sentiment/")
    assert response.status_code == 401
    assert response.json()["detail"] == "User inactive or deleted."


def test_a_user_without_a_password_makes_and_replaces_their_token_on_a_page(people):
    """The way to the API for one who signs in through the provider: the key shown once."""
    user = UserFactory(username="sso-made")
    user.set_unusable_password()
    user.save()
    page = Client()
    assert page.get("/accounts/api-token/").status_code == 302  # signed out: to the login page
    page.force_login(user)
    assert 'id="token-none"' in page.get("/accounts/api-token/").content.decode()

    keys = []
    for said in ("Your token is made.", "Your new token is made; the old one no longer works."):
        shown = page.post("/accounts/api-token/", follow=True).content.decode()
        assert said in shown
        key = re.search(r'id="token-key" value="(\w+)"', shown)
        assert key is not None
        keys.append(key[1])
        again = page.get("/accounts/api-token/").content.decode()
        assert key[1] not in again and f"<code>{key[1][:6]}…</code>" in again

    api = APIClient()
    for key, status in zip(keys, (401, 200), strict=True):
        api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        assert api.get("/api/projects/").status_code == status


def test_token_with_wrong_password_is_refused(db):
    UserFactory(username="u")
    response = APIClient().post("/api/auth/token/", {"username": "u", "password": "no"})
    assert response.status_code == 400
    assert "token" not in response.json()


def test_login_page_logs_in_and_logout_logs_out(people):
    client = Client()
    page = client.get("/accounts/login/")
    assert page.status_code == 200 and b"csrfmiddlewaretoken" in page.content
    response = client.post("/accounts/login/", {"username": "erin", "password": "pw"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200
    bad = Client().post("/accounts/login/", {"username": "erin", "password": "wrong"})
    assert b"didn't match" in bad.content
    client.post("/accounts/logout/")
    assert client.get("/").status_code == 302


def test_openapi_schema_and_docs_are_served(people):
    client = Client()
    client.force_login(people["admin"])
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert schema.status_code == 200
    assert "/api/projects/{slug}/examples/import/" in schema.json()["paths"]
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    assert b"cdn" not in docs.content.lower()


def test_repeated_failed_logins_lock_the_account_out_for_a_while(db, settings):
    """Login throttling (django-axes): after the limit, even the right password is refused."""
    UserFactory(username="target")
    page, api = Client(), APIClient()
    for attempt in range(1, settings.AXES_FAILURE_LIMIT + 1):
        response = page.post("/accounts/login/", {"username": "target", "password": "guess"})
        # The form again with its error, then "too many requests" from the limit on.
        assert response.status_code == (429 if attempt == settings.AXES_FAILURE_LIMIT else 200)
    locked = page.post("/accounts/login/", {"username": "target", "password": "pw"})
    assert locked.status_code == 429 and "_auth_user_id" not in page.session
    token = api.post("/api/auth/token/", {"username": "target", "password": "pw"}, format="json")
    assert token.status_code in (400, 429) and "token" not in token.json()
    # Another account from the same address is not locked out.
    UserFactory(username="bystander")
    assert (
        api.post(
            "/api/auth/token/", {"username": "bystander", "password": "pw"}, format="json"
        ).status_code
        == 200
    )


def test_behind_a_proxy_a_lockout_is_of_the_client_not_of_everyone(db, settings):
    """Behind the recommended proxy every request came from its address: one attacker locked
    a username out for everyone. With CLIENT_ADDRESS_HEADER, the client's own address counts."""
    settings.CLIENT_ADDRESS_HEADER, settings.TRUSTED_PROXY_COUNT = "HTTP_X_FORWARDED_FOR", 1
    UserFactory(username="target")
    attacker = Client(HTTP_X_FORWARDED_FOR="203.0.113.5")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        attacker.post("/accounts/login/", {"username": "target", "password": "guess"})
    locked = attacker.post("/accounts/login/", {"username": "target", "password": "pw"})
    assert locked.status_code == 429
    owner = Client(HTTP_X_FORWARDED_FOR="198.51.100.7")  # the same proxy, another client
    response = owner.post("/accounts/login/", {"username": "target", "password": "pw"})
    assert response.status_code == 302 and "_auth_user_id" in owner.session


def test_an_overlong_username_for_a_token_is_a_400_not_a_500(db):
    """The login-throttling record holds 255 characters: the form refuses longer names first."""
    response = APIClient().post(
        "/api/auth/token/", {"username": "u" * 300, "password": "pw"}, format="json"
    )
    assert response.status_code == 400
    assert "username" in response.json()


def test_the_schema_names_each_operations_error_answers(people):
    """/api/schema/ omitted the 403/404/409/413/415 answers the API gives."""
    client = Client()
    client.force_login(people["admin"])
    paths = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    bulk = paths["/api/projects/{slug}/items/bulk/"]["post"]["responses"]
    assert {"400", "401", "403", "404", "409", "429"} <= set(bulk)
    upload = paths["/api/projects/{slug}/examples/import/"]["post"]["responses"]
    assert {"413", "415"} <= set(upload)
    reading = paths["/api/projects/{slug}/items/"]["get"]["responses"]
    assert {"401", "403", "404"} <= set(reading) and "409" not in reading
    error = bulk["403"]["content"]["application/json"]["schema"]
    assert error == {"$ref": "#/components/schemas/Error"}


def test_the_schema_describes_every_json_answer(people):
    """Nine endpoints documented their answer as a bare object: statistics, validators,
    adjudication, qualification, a release's diff, the imports of sets, votes and published
    sets, and import jobs. Every JSON answer now has its fields (files are strings)."""
    client = Client()
    client.force_login(people["admin"])
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    paths = schema["paths"]
    bare = [
        (method, path, code)
        for path, operations in paths.items()
        for method, operation in operations.items()
        for code, answer in operation["responses"].items()
        if code.startswith("2")
        for schema in [answer.get("content", {}).get("application/json", {}).get("schema")]
        if schema is not None and not {"$ref", "properties", "items", "oneOf"} & set(schema)
    ]
    assert bare == []
    stats = schema["components"]["schemas"]["ProjectStats"]  # label projects', or free text's
    assert [s["$ref"] for s in stats["oneOf"]] == [
        "#/components/schemas/Stats", "#/components/schemas/AnswerStats"
    ]  # fmt: skip
    components = schema["components"]["schemas"]  # each answer matches one branch only
    shapes = [components[name]["properties"]["shape"] for name in ("Stats", "AnswerStats")]
    enums = [components[shape["allOf"][0]["$ref"].split("/")[-1]]["enum"] for shape in shapes]
    assert enums == [["labels"], ["answers"]]
    assert all("shape" in components[name]["required"] for name in ("Stats", "AnswerStats"))


def test_each_role_starts_where_the_readme_says(people):
    """After logging in, an expert of one project lands on its Pivots, a validator on Validate,
    an admin on the dashboard; with several projects, the list, whose links lead there."""
    slug = "sentiment"
    starts = {"erin": f"/p/{slug}/pivots/", "victor": f"/p/{slug}/validate/",
              "alice": f"/p/{slug}/"}  # fmt: skip
    for username, start in starts.items():
        client = Client()
        landed = client.post("/accounts/login/", {"username": username, "password": "pw"},
                             follow=True)  # fmt: skip
        assert landed.redirect_chain[-1][0] == start, username
        assert landed.status_code == 200
    member(ProjectFactory(slug="second"), "erin", "validator")
    client = Client()
    landed = client.post("/accounts/login/", {"username": "erin", "password": "pw"}, follow=True)
    assert landed.redirect_chain[-1][0] == "/"
    html = landed.content.decode()
    assert f'href="/p/{slug}/pivots/"' in html and 'href="/p/second/validate/"' in html
