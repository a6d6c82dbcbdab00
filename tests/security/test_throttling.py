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
