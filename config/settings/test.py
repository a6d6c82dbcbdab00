"""Test settings: real PostgreSQL unless DATABASE_URL says otherwise."""

import os

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
# Tests that commit an evaluation run send it to a real Redis broker: database 14 (or the
# CELERY_BROKER_URL given) for one process; under pytest-xdist (`make test` runs two), 14 for
# the first process, 13 for the second and so on down, so that each process's workers take
# only its own jobs.
if "PYTEST_XDIST_WORKER" in os.environ or "CELERY_BROKER_URL" not in os.environ:
    _process = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    os.environ["CELERY_BROKER_URL"] = f"redis://127.0.0.1:6379/{14 - _process}"
# The fuzz and load tests send thousands of requests; the throttling test sets its own rates.
for scope in ("ANON", "USER", "BAD_TOKEN"):
    os.environ.setdefault(f"API_THROTTLE_{scope}", "1000000/minute")
for per in ("ADDRESS_HOUR", "STUDY_MINUTE"):  # test_arrivals.py sets its own
    os.environ.setdefault(f"STUDY_NEW_PARTICIPANTS_PER_{per}", "1000000")

from config.settings.local import *  # noqa: E402, F403

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
