"""Test settings: real PostgreSQL unless DATABASE_URL says otherwise."""

import os

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
# Tests that commit an evaluation run send it to a real Redis broker (database 14).
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/14")

from config.settings.local import *  # noqa: F403

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
