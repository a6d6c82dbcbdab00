"""Production settings: no defaults for secrets, HTTPS everywhere, `check --deploy` clean."""

from config.env import envbool, envint, envstr
from config.settings.base import *  # noqa: F403

DEBUG = False
SECRET_KEY = envstr("SECRET_KEY")  # raises ImproperlyConfigured when unset

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
X_FRAME_OPTIONS = "DENY"
