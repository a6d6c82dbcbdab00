"""API tokens: DRF's token authentication through one hand-written statement (it runs on every
API call, and building the ORM's query cost more than running it: annotation.sql), and the view
that hands out tokens."""

from typing import Any

from django.contrib.auth import get_user_model
from rest_framework import authentication, exceptions, serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer

from annotation.sql import token_user


class TokenAuthentication(authentication.TokenAuthentication):
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

    username = serializers.CharField(
        max_length=get_user_model()._meta.get_field("username").max_length, write_only=True
    )
