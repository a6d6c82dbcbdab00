"""Accounts that cannot log in: imported authors and external validators."""

from typing import Any

from django.contrib.auth import get_user_model

User = get_user_model()


def inactive_user(username: str) -> Any:
    """An account that cannot log in, for imported authors and external validators."""
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.is_active = False
        user.set_unusable_password()
        user.save()
    return user
