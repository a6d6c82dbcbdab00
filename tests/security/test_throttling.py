"""API throttling (docs/api.md): 1,000 requests in 9.3 s and 300 bad tokens were all served."""

import pytest
from django.core.cache import cache
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

pytestmark = pytest.mark.django_db


@pytest.fixture
def rates(monkeypatch):  # type: ignore[no-untyped-def]
    cache.clear()
    for scope, rate in (("anon", "3/minute"), ("user", "5/minute"), ("bad_token", "4/minute")):
        monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, scope, rate)
    yield
    cache.clear()


def statuses(client: APIClient, n: int, path: str = "/api/projects/") -> list[int]:
    return [client.get(path).status_code for _ in range(n)]


def test_a_user_past_the_rate_gets_429_in_json(project, people, rates):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=people['admin'])}")
    assert statuses(client, 5) == [200] * 5
    refused = client.get("/api/projects/")
    assert refused.status_code == 429 and "Request was throttled" in refused.json()["detail"]
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=people['expert'])}")
    assert other.get("/api/projects/").status_code == 200  # counted per user


def test_password_sprayers_and_token_guessers_are_slowed_by_address(db, rates):
    sprayer = APIClient()
    answers = [
        sprayer.post("/api/auth/token/", {"username": f"user{n}", "password": "guess"}).status_code
        for n in range(4)
    ]
    assert answers == [400] * 3 + [429]
    guesser = APIClient()
    guesser.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    assert statuses(guesser, 5) == [401] * 4 + [429]


def test_a_forged_forwarded_for_header_does_not_dodge_throttling(db, rates, settings):
    """With no proxy configured, 60 bad tokens, each with an X-Forwarded-For of its own, all
    got 401 and never 429: DRF counted the header the client wrote."""
    settings.CLIENT_ADDRESS_HEADER = ""
    guesser = APIClient()
    guesser.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    answers = [guesser.get("/api/projects/", HTTP_X_FORWARDED_FOR=f"10.0.0.{n}").status_code
               for n in range(5)]  # fmt: skip
    assert answers == [401] * 4 + [429]
    sprayer = APIClient()
    answers = [
        sprayer.post("/api/auth/token/", {"username": f"u{n}", "password": "guess"},
                     HTTP_X_FORWARDED_FOR=f"10.1.0.{n}").status_code
        for n in range(4)
    ]  # fmt: skip
    assert answers == [400] * 3 + [429]


def test_behind_a_configured_proxy_each_client_is_counted_by_its_own_address(db, rates, settings):
    """The proxy appends the address it saw: that entry, not what the client wrote before it."""
    settings.CLIENT_ADDRESS_HEADER = "HTTP_X_FORWARDED_FOR"
    settings.TRUSTED_PROXY_COUNT = 1
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)

    def guess(forged: str, seen: str) -> int:
        return client.get("/api/projects/", HTTP_X_FORWARDED_FOR=f"{forged}, {seen}").status_code

    assert [guess(f"10.9.9.{n}", "192.0.2.1") for n in range(5)] == [401] * 4 + [429]
    assert guess("10.9.9.9", "192.0.2.2") == 401  # another client, its own count
