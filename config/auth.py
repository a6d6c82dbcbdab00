"""API tokens: DRF's token authentication as one hand-written statement (it runs on every API
call, and building the ORM's query cost more than running it), and the view that hands out
tokens."""

import functools
from typing import Any

from django.contrib.auth import get_user_model
from rest_framework import authentication, exceptions, serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer

from annotation.prepared import Statement, fetch


@functools.cache
def _token_user() -> Statement:
    table = get_user_model()._meta.db_table
    sql = f"SELECT u.* FROM {table} u JOIN authtoken_token t ON t.user_id = u.id"
    return Statement("token_user", sql + " WHERE t.key = %(key)s", key="text")


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        users = fetch(get_user_model(), *_token_user().bind({"key": key}))
        user = users[0] if users else None
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
