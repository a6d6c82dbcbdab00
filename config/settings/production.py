"""Production settings: no defaults for secrets, HTTPS everywhere, `check --deploy` clean."""

from config.env import envbool, envint, envstr
from config.settings.base import *  # noqa: F403

DEBUG = False
SECRET_KEY = envstr("SECRET_KEY")  # raises ImproperlyConfigured when unset

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", True)
# Behind a TLS proxy that itself redirects http to https, Django need not (Compose's default):
# say so, and `check --deploy` stops warning about it (security.W008).
if envbool("TLS_TERMINATED_BY_PROXY", False) and not SECURE_SSL_REDIRECT:
    SILENCED_SYSTEM_CHECKS = ["security.W008"]
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
X_FRAME_OPTIONS = "DENY"
