"""Real Celery worker processes for integration tests."""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import redis
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent


def worker_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    for name in ("SECRET_KEY", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
        env.pop(name, None)
    # The worker loads local models from MODELS_DIR only: the tests' models are in pytest's
    # temporary folders, which the tests' own settings name (tests/conftest.py).
    return {**env, "PYTHONPATH": str(ROOT), "MODELS_DIR": str(settings.MODELS_DIR), **extra}


# Where the tests send tasks (config/settings/test.py: Redis database 14 unless CELERY_BROKER_URL
# names another, so that two test runs on one machine keep apart), and so where a worker listens.
BROKER = settings.CELERY_BROKER_URL


def worker_on_test_db(media_root: Path, var_dir: Path, **extra: str) -> dict[str, str]:
    """A worker on the tests' database and broker (emptied first), its heartbeats going stale
    after 3 s, with `extra` settings."""
    from django.db import connection

    redis.Redis.from_url(BROKER).flushdb()
    db = connection.settings_dict
    return worker_env(
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        CELERY_BROKER_URL=BROKER, MEDIA_ROOT=str(media_root), CONTRASTLAB_VAR_DIR=str(var_dir),
        EVALUATION_STALE_SECONDS="3", **extra,
    )  # fmt: skip


def start_worker(env: dict[str, str], log: Path | None = None) -> subprocess.Popen:
    output = log.open("a") if log else subprocess.PIPE
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "evaluation,imports",
         "--concurrency", "1", "--pool", "solo", "--loglevel", "info", "--without-heartbeat",
         "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def stop(process: subprocess.Popen) -> str:
    process.send_signal(signal.SIGTERM)
    try:
        out, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    return out or ""


def wait_for(predicate: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")
