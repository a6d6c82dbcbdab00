"""Local and demo settings: SQLite and the filesystem broker unless the environment says more."""

from config.env import envbool, envstr
from config.settings.base import *  # noqa: F403
from config.settings.base import STATIC_ROOT, VAR_DIR

VAR_DIR.mkdir(parents=True, exist_ok=True)
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise warns when it is missing

DEBUG = envbool("DEBUG", True)
# Only this path has a default key; production refuses to start without one.
SECRET_KEY = envstr("SECRET_KEY", "local-dev-only-not-secret")
