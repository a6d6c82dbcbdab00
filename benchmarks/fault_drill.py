"""Fault drill (issue 31): 32 validators vote through gunicorn while PostgreSQL restarts, a
gunicorn worker is killed and the whole Celery worker is killed mid-run (a new one starts).
Clients retry a vote whose answer they did not get, as docs/api.md says they may.

It reports, and checks: every vote a client saw acknowledged is stored (0 lost), no validator
has two votes on an item (0 doubled), no item has more counted votes than it needs (0
over-assigned), every error answer from /api/ was JSON, and the evaluation run finished exactly
once with one prediction per example. Needs root (it restarts the local PostgreSQL cluster).

    .venv/bin/python benchmarks/fault_drill.py [--seconds 40]
"""

import argparse
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from common import ROOT
from seed import URL, bench_database, seed_validation

PORT = 8767
BROKER = "redis://127.0.0.1:6379/11"


def client(token: str, validator: int, until: float, out: dict, rng: random.Random) -> None:
    """Vote back to back; on a failure (no answer, or a 5xx), send the same vote again."""
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    item = None
    pending: Any = None  # (item, label) of a vote sent whose answer we did not get
    while time.monotonic() < until:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
            if pending is None and item is None:
                connection.request("GET", "/api/projects/bench/validation/next/", headers=headers)
                response = connection.getresponse()
                body = response.read()
                if response.status == 204:
                    break
                if response.status != 200:
                    out["errors"].append((response.status, response.getheader("Content-Type")))
                    time.sleep(0.2)
                    continue
                item = json.loads(body)["item"]
            if pending is None:
                pending = (item, rng.choice(["negative", "negative", "positive"]))
            vote = json.dumps({"label": pending[1], "seconds_spent": 5})
            path = f"/api/projects/bench/validation/{pending[0]}/vote/"
            connection.request("POST", path, body=vote, headers=headers)
            response = connection.getresponse()
            body = response.read()
        except OSError:  # the server was restarting: try the same vote again
            out["dropped"] += 1
            time.sleep(0.2)
            continue
        if response.status >= 400:
            out["errors"].append((response.status, response.getheader("Content-Type")))
        if response.status in (200, 201):
            out["acknowledged"].append((pending[0], validator))
            answer = json.loads(body)
            item = answer["next"]["item"] if answer["next"] else None
            pending = None
        elif response.status < 500:  # refused for good (409: full, or resolved meanwhile)
            pending, item = None, None
        else:
            time.sleep(0.2)  # a 5xx: the vote may or may not be stored; send it again


def start_worker(env: dict) -> subprocess.Popen:
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "evaluation",
               "--pool", "solo", "--loglevel", "warning"]  # fmt: skip
    return subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)


def restart_postgresql() -> float:
    version = sorted(os.listdir("/etc/postgresql"))[0]
    started = time.monotonic()
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"], check=True
    )
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--clients", type=int, default=32)
    args = parser.parse_args()
    os.environ["CELERY_BROKER_URL"] = BROKER  # this process enqueues the run
    os.environ["MEDIA_ROOT"] = tempfile.mkdtemp(prefix="fault-drill-")  # the release's bundle
    bench_database()
    from django.db import connection
    from rest_framework.authtoken.models import Token

    from annotation.models import ValidationItem, Vote
    from annotation.releases.services import release_create
    from evaluation.models import EvaluationRun, ModelSpec, Prediction
    from evaluation.runs.services import evaluation_enqueue

    project, clients = seed_validation(2_000, 3_000, clients=args.clients)
    release = release_create(project=project, user=None, version="1.0")
    spec = ModelSpec.objects.create(project=project, name="slow", kind="python", batch_size=200,
                                    source="tests.evaluation.rule_models:slow_keyword")  # fmt: skip
    tokens = [Token.objects.get_or_create(user=u)[0].key for u in clients]
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    env = {**os.environ, "DATABASE_URL": URL, "DEBUG": "0", "DATABASE_CONN_MAX_AGE": "60",
           "LOG_LEVEL": "ERROR", "CELERY_BROKER_URL": BROKER, "EVALUATION_STALE_SECONDS": "5",
           "PYTHONPATH": str(ROOT)}  # fmt: skip
    import redis

    redis.Redis.from_url(BROKER).flushdb()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind",
         f"127.0.0.1:{PORT}", "--workers", "6", "--log-level", "error"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    worker = start_worker(env)
    time.sleep(4)
    run = evaluation_enqueue(release=release, model=spec, split="test", user=None)
    connection.close()
    out: dict = {"acknowledged": [], "errors": [], "dropped": 0}
    until = time.monotonic() + args.seconds
    threads = [
        threading.Thread(target=client, args=(t, u.pk, until, out, random.Random(n)))
        for n, (t, u) in enumerate(zip(tokens, clients, strict=True))
    ]
    for thread in threads:
        thread.start()
    events = []
    time.sleep(args.seconds * 0.2)
    events.append(f"PostgreSQL restarted in {restart_postgresql():.1f} s")
    time.sleep(args.seconds * 0.2)
    children = [int(p) for p in Path(f"/proc/{server.pid}/task/{server.pid}/children")
                .read_text().split()]  # fmt: skip
    os.kill(children[0], signal.SIGKILL)
    events.append(f"gunicorn worker {children[0]} killed")
    time.sleep(args.seconds * 0.1)
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    events.append("the Celery worker killed (SIGKILL); a new one started")
    worker = start_worker(env)
    for thread in threads:
        thread.join()
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.finished:
            break
        time.sleep(1)
    for process in (server, worker):
        process.send_signal(signal.SIGTERM)
        process.wait()

    acknowledged = set(out["acknowledged"])
    stored = set(Vote.objects.filter(item__project=project).values_list("item_id", "validator_id"))
    lost = len(acknowledged - stored)
    doubled = Vote.objects.filter(item__project=project).count() - len(
        stored
    )  # the unique constraint says 0; counted anyway
    over = ValidationItem.objects.filter(project=project, counted_votes__gt=5).count()
    statuses = Counter(status for status, _ in out["errors"])
    not_json = [e for e in out["errors"] if not (e[1] or "").startswith("application/json")]
    predictions = Prediction.objects.filter(run=run)
    examples = predictions.values("example").distinct().count()
    for event in events:
        print(event)
    print(f"votes acknowledged to clients: {len(acknowledged)}; lost: {lost}; "
          f"doubled: {doubled}; over-assigned items: {over}")  # fmt: skip
    print(f"error answers: {dict(statuses)}, not JSON: {len(not_json)}; "
          f"requests without an answer (retried): {out['dropped']}")  # fmt: skip
    print(f"run: {run.status}, attempts {run.attempts}, {predictions.count()} predictions for "
          f"{examples} examples of {run.total}")  # fmt: skip
    assert lost == doubled == over == len(not_json) == 0
    assert run.status == EvaluationRun.Status.SUCCEEDED and predictions.count() == examples
    print("fault drill passed")


if __name__ == "__main__":
    main()
