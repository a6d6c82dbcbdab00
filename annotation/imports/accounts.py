"""Accounts that cannot log in: imported authors and external validators."""

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password

User = get_user_model()


def inactive_user(username: str) -> Any:
    """An account that cannot log in, for imported authors and external validators."""
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.is_active = False
        user.set_unusable_password()
        user.save()
    return user


def inactive_users(usernames: list[str]) -> dict[str, int]:
    """username -> id of accounts that cannot log in, created in one statement if missing."""
    known = dict(User.objects.filter(username__in=usernames).values_list("username", "id"))
    missing = [
        User(username=name, is_active=False, password=make_password(None))
        for name in usernames
        if name not in known
    ]
    User.objects.bulk_create(missing, batch_size=2000, ignore_conflicts=True)
    return dict(User.objects.filter(username__in=usernames).values_list("username", "id"))
