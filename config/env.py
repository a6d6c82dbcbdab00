"""Read settings from the environment in one place, failing loudly on bad values."""

import os

from django.core.exceptions import ImproperlyConfigured

TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off", ""}


def envstr(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None:
        raise ImproperlyConfigured(f"Set the {name} environment variable.")
    return value


def envbool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    if value.lower() in TRUE:
        return True
    if value.lower() in FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use 1/0, true/false).")


def envchoice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(name, default)
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} is not one of {', '.join(choices)}.")
    return value


def envint(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer.") from None


def envlist(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def envints(name: str, default: str) -> list[int]:
    """A comma-separated list of whole numbers, none negative."""
    values = envlist(name, default)
    if not all(value.isdigit() for value in values):
        raise ImproperlyConfigured(f"{name} must be whole numbers separated by commas.")
    return [int(value) for value in values]
