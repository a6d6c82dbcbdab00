"""API tokens: DRF's token authentication through one hand-written statement (it runs on every
API call, and building the ORM's query cost more than running it: annotation.sql), the view
that hands out tokens for a username and password, and the page where a signed-in user makes
theirs (the way for those who sign in through the provider, config/sso.py)."""

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from rest_framework import authentication, exceptions, serializers, throttling
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer

from annotation.sql import token_user
from config.edge import client_address


class ClientAddress:
    """Throttles count a client by the address config.edge.client_address finds: the
    connection's, or the entry a configured, trusted proxy added. DRF's own get_ident read any
    X-Forwarded-For a client sent when no proxy was configured, so that 60 bad tokens, each
    with a header of its own, were never throttled."""

    def get_ident(self, request: Any) -> str:
        return client_address(request) or ""


class AnonThrottle(ClientAddress, throttling.AnonRateThrottle):
    pass


class UserThrottle(ClientAddress, throttling.UserRateThrottle):
    pass


class BadTokenThrottle(ClientAddress, throttling.SimpleRateThrottle):
    """Failed token checks per client address: a guesser is slowed down (429) before the
    request is even authenticated, which the other throttles, counting after it, cannot do."""

    scope = "bad_token"

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            throttle = BadTokenThrottle()
            if not throttle.allow_request(request, None):  # type: ignore[arg-type]  # no view yet
                raise exceptions.Throttled(throttle.wait()) from None
            raise

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        user = token_user(key)
        if user is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        if not user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        return user, self.get_model()(key=key, user=user)


class TokenRequestSerializer(AuthTokenSerializer):
    """Username and password for a token. A username longer than any account's is refused
    before authentication: the login-throttling record would not hold it (a 500)."""

    username = serializers.RegexField(
        r"\S",  # a visible character (spaces around are trimmed), as the schema states
        max_length=get_user_model()._meta.get_field("username").max_length,
        write_only=True,
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        try:
            return super().validate(attrs)
        except serializers.ValidationError:
            if settings.PASSWORD_LOGIN == "everyone":
                raise
            raise serializers.ValidationError(
                "Unable to log in with provided credentials: only staff sign in with a "
                "password here; everyone else makes their token on the API page "
                "(/accounts/api-token/), signed in.",
                code="authorization",
            ) from None


@login_required
def token_page(request: HttpRequest) -> HttpResponse:
    """Your API token: made, or replaced (the old one stops working), on a click. Its key is
    shown once, on the page that follows the click; afterwards only its first characters."""
    user: Any = request.user  # signed in: login_required
    if request.method == "POST":
        replaced, _ = Token.objects.filter(user=user).delete()
        token = Token.objects.create(user=user)
        request.session["token_made"] = token.key
        messages.success(
            request,
            "Your new token is made; the old one no longer works."
            if replaced
            else "Your token is made.",
        )
        return redirect("api-token-page")
    return render(
        request,
        "registration/api_token.html",
        {
            "token": Token.objects.filter(user=user).first(),
            "made": request.session.pop("token_made", ""),
        },
    )
