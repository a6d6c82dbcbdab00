"""Vote import through the API on gunicorn with its default settings (one sync worker, 30 s
timeout): 100k items with 500k votes from 40 external validators (docs/formats.md), a file of
about 30 MB, as a user would send it. A file over IMPORT_BACKGROUND_BYTES is answered at once
(202) and imported by a Celery worker that this script starts: it reports both the answer's
time and the job's.

Baseline in the same run: the previous importer's way, one INSERT per item and one per item's
votes, timed on 5,000 items in a rolled-back transaction and scaled to the same size.

    .venv/bin/python benchmarks/vote_import.py [--items 100000]

The comparison with Label Studio (issue 50: 20k real IMDb reviews, five votes a line, and 10x)
is `originals_import.py --api --kinds votes`, through the same API and worker.
"""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.request
from typing import Any

from common import ROOT
from seed import URL, bench_database, text

BOUNDARY = "contrastlab-benchmark"


def build_file(n: int, rng: random.Random, words: int = 30, first: int = 0) -> bytes:
    workers = [f"w{k}" for k in range(40)]
    lines = []
    for i in range(n):
        chosen = rng.sample(workers, 5)
        distribution: dict[str, list[str]] = {}
        for worker in chosen:
            label = "positive" if rng.random() < 0.7 else "negative"
            distribution.setdefault(label, []).append(worker)
        line = {"id": f"ext-{first + i}", "fields": {"text": text(rng, words)},
                "label_distribution": distribution}  # fmt: skip
        lines.append(json.dumps(line, separators=(",", ":")))
    return "\n".join(lines).encode()


def multipart(name: str, data: bytes) -> bytes:
    disposition = f'Content-Disposition: form-data; name="file"; filename="{name}"'
    head = f"--{BOUNDARY}\r\n{disposition}\r\nContent-Type: application/x-ndjson\r\n\r\n"
    return head.encode() + data + f"\r\n--{BOUNDARY}--\r\n".encode()


def old_way_rate(project, rows: list[dict]) -> float:  # type: ignore[no-untyped-def]
    """Items per second of row-by-row inserts, in a transaction that is rolled back."""
    from django.db import transaction

    from annotation.imports.accounts import inactive_users
    from annotation.models import ValidationItem, Vote

    class Rollback(Exception):
        pass

    started = time.perf_counter()
    try:
        with transaction.atomic():
            names = sorted({w for r in rows for ws in r["label_distribution"].values() for w in ws})
            ids = inactive_users([f"old-{w}" for w in names])
            for r in rows:
                item = ValidationItem.objects.create(
                    project=project, external_id=f"old-{r['id']}", fields=r["fields"],
                    status="resolved", counted_votes=5,
                    label_votes={k: len(ws) for k, ws in r["label_distribution"].items()},
                )  # fmt: skip
                Vote.objects.bulk_create(
                    Vote(item=item, validator_id=ids[f"old-{w}"], label=label)
                    for label, ws in r["label_distribution"].items()
                    for w in ws
                )
            raise Rollback
    except Rollback:
        pass
    return len(rows) / (time.perf_counter() - started)


def follow(port: int, token: str, job: int, started: float) -> tuple[float, str, bytes]:
    """Poll an import job until it ends: (seconds since the upload began, status, answer)."""
    url = f"http://127.0.0.1:{port}/api/projects/votes/imports/{job}/"
    while True:
        request = urllib.request.Request(url, headers={"Authorization": f"Token {token}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        answer = json.loads(body)
        if answer["status"] in ("succeeded", "failed"):
            return time.perf_counter() - started, answer["status"], body[:300]
        time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--words", type=int, default=30, help="words per item's text")
    args = parser.parse_args()
    bench_database()
    from rest_framework.authtoken.models import Token

    from annotation.models import Project, Vote
    from annotation.projects import services
    from tests.factories import UserFactory

    admin: Any = UserFactory(username="importer", is_staff=True)
    project = services.project_create(
        user=admin, name="Votes", slug="votes", fields=[{"name": "text"}],
        labels=["positive", "negative"],
    )  # fmt: skip
    token = Token.objects.create(user=admin).key
    data = build_file(args.items, random.Random(0), args.words)
    sample = [json.loads(line) for line in data.splitlines()[:5000]]
    print(
        f"{args.items} items, {data.count(b'label_distribution')} lines, {len(data) / 1e6:.1f} MB"
    )
    port = 8766
    env = {**os.environ, "DATABASE_URL": URL, "DEBUG": "0", "LOG_LEVEL": "WARNING",
           "CELERY_BROKER_URL": "redis://127.0.0.1:6379/12"}  # fmt: skip
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application",
         "--bind", f"127.0.0.1:{port}"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "imports",
         "--pool", "solo", "--loglevel", "warning"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    job_seconds = None
    try:
        time.sleep(4)
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/projects/votes/import/votes/",
            data=multipart("votes.jsonl", data),
            headers={"Authorization": f"Token {token}",
                     "Content-Type": f"multipart/form-data; boundary={BOUNDARY}"},
        )  # fmt: skip
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                status, body = response.status, response.read()[:200]
        except urllib.error.HTTPError as error:
            status, body = error.code, error.read()[:200]
        elapsed = time.perf_counter() - started
        if status == 202:
            job = json.loads(body)["job"]
            job_seconds, status, body = follow(port, token, job, started)
    finally:
        for process in (server, worker):
            process.send_signal(signal.SIGTERM)
            process.wait()
    votes = Vote.objects.filter(item__project=project).count()
    print(f"API import under gunicorn: answered in {elapsed:.1f} s", end="")
    if job_seconds is not None:
        print(
            f" (202, queued); the worker's job {status} {job_seconds:.1f} s after the upload",
            end="",
        )
        elapsed = job_seconds
    print(f"; {votes} votes stored ({args.items / elapsed:,.0f} items/s); {body!r}")
    old = old_way_rate(Project.objects.get(pk=project.pk), sample)
    ratio = args.items / elapsed / old
    print(f"baseline, row-by-row inserts: {old:,.0f} items/s -> {args.items / old:.1f} s for "
          f"{args.items} items; ratio {ratio:.1f}x; target < 20 s")  # fmt: skip


if __name__ == "__main__":
    main()
