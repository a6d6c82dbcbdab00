"""A real OpenID Connect provider for the single sign-on tests: django-oauth-toolkit's, in a
Django of its own, run in its own process by serve.py. Nothing of ContrastLab is in it."""

import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

SECRET_KEY = "a provider that lives for one test"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
ROOT_URLCONF = "tests.sso_provider.urls"
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [Path(__file__).parent / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["PROVIDER_DB"]}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
LOGIN_URL = "/login/"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": _key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode(),
    "OAUTH2_VALIDATOR_CLASS": "tests.sso_provider.claims.Claims",
    "SCOPES": {"openid": "OpenID Connect", "email": "e-mail", "profile": "profile"},
    # RP-Initiated Logout 1.0, named in the discovery document unless PROVIDER_LOGOUT=0; with
    # the ID token of the signed-in person as its hint it ends their session without asking.
    "OIDC_RP_INITIATED_LOGOUT_ENABLED": os.environ.get("PROVIDER_LOGOUT", "1") == "1",
    "OIDC_RP_INITIATED_LOGOUT_ALWAYS_PROMPT": False,
}
