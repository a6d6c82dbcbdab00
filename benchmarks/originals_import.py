"""Import of originals (docs/workflows.md) at 20k and 200k JSONL rows (40-word texts), in-process on
PostgreSQL: parse, check every row, insert in one transaction.

Beside it: Label Studio CE's figure measured on this kind of machine (20k texts in 3.9 s,
5,183 tasks/s; ../shared/ENVIRONMENT.md), and, in the same run, one INSERT per row
(`Example.objects.create`, 2,000 rows, rolled back).

With --api, also each import through the API as a user sends it, at 20k and 200k rows of real
IMDb reviews (../shared/data, repeated and numbered; 20k originals are 19.5 MB): originals, sets
(one contrast pair a line, accepted) and votes (five of 40 external validators a line). Each goes
to the background import (over IMPORT_BACKGROUND_BYTES): gunicorn (one sync worker) answers 202,
a Celery worker (prefork, one child, as in Compose) imports. Timed from the start of the upload
until a poll of the job (every 50 ms) sees `succeeded`; the job's own timestamps split that
into the request (upload, storing, the job made), the queue (until the worker claimed it), the
run and the poll's lag, after a small import of each kind that is not timed (the servers'
first request and task load their code). The same file imported in this process (import_now,
no HTTP, no queue) is printed beside it. Each line gives the CPU seconds spent: through the
API, gunicorn's and the worker's processes (PostgreSQL's backends there come and go with each
request and task); in this process, its own and its PostgreSQL backend's. IMPORT_MAX_BYTES is
raised for the 10x files (a 200k-line votes file is about 200 MB). The broker is
$BENCH_BROKER (Redis db 9 if unset); files and logs go to a new folder under $TMPDIR.

The Data page's trigram indexes (migration 0023) are written in each import's transaction: with
--trigrams both, every import runs with them (as deployed), then again after they are dropped
from the benchmark's database, in the same run; that gap is their cost on imports.

    .venv/bin/python benchmarks/originals_import.py [--api [--api-only] [--runs 2]
        [--sizes 20000 200000] [--kinds originals sets votes] [--trigrams kept|dropped|both]]
"""

import argparse
import io
import json
import os
import random
import signal
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import psutil
from common import DATA, read_tsv, require_data
from job_drill import Worker, imdb_jsonl, start_gunicorn
from seed import URL, bench_database, text

LABEL_STUDIO_ROWS_PER_S = 5183
BROKER = os.environ.get("BENCH_BROKER", "redis://127.0.0.1:6379/9")
POLL_SECONDS = 0.05
WARM_UP_ROWS = 1000  # queued too: the warm-up's server takes uploads over 256 KiB to a worker
# (API path under the project, form fields besides the file) by kind; sets come accepted.
KINDS = {
    "originals": ("examples/import/", {"format": "jsonl"}),
    "sets": ("import/sets/", {"format": "sets_jsonl", "accept": "true"}),
    "votes": ("import/votes/", {}),
}


def in_process() -> None:
    """The in-process figures of 40-word texts, and one INSERT per row."""
    from django.db import transaction

    from annotation.imports.services.originals import import_examples
    from annotation.models import Example
    from annotation.projects import services

    project = services.project_create(
        user=None, name="Originals", slug="originals", fields=[{"name": "text"}],
        labels=["positive", "negative"],
    )  # fmt: skip
    rng = random.Random(0)
    for n in (20_000, 200_000):
        rows = ({"id": f"{n}-{i}", "text": text(rng, 40), "label": rng.choice(project.labels)}
                for i in range(n))  # fmt: skip
        data = "\n".join(json.dumps(row) for row in rows).encode()
        started = time.perf_counter()
        import_examples(project=project, user=None, data=data, source_name=f"{n}.jsonl")
        print(f"in-process, 40-word texts: {n:>7} rows: {rate_of(n, started)}")
    started = time.perf_counter()
    with transaction.atomic():
        for i in range(2000):
            Example.objects.create(project=project, external_id=f"one-{i}",
                                   fields={"text": text(rng, 40)}, label="positive")  # fmt: skip
        one_by_one = 2000 / (time.perf_counter() - started)
        transaction.set_rollback(True)
    print(f"baseline, one INSERT per row: {one_by_one:,.0f} rows/s")


def rate_of(n: int, started: float) -> str:
    seconds = time.perf_counter() - started
    rate = n / seconds
    return (f"{seconds:.2f} s, {rate:,.0f} rows/s = {rate / LABEL_STUDIO_ROWS_PER_S:.2f}x "
            f"Label Studio's {LABEL_STUDIO_ROWS_PER_S:,} tasks/s")  # fmt: skip


def pairs() -> list[tuple[dict[str, str], dict[str, str]]]:
    """Real IMDb contrast pairs: each original review with its counterpart, the label flipped."""
    require_data("cad-sentiment")
    found: list[tuple[dict[str, str], dict[str, str]]] = []
    for original in sorted([*DATA.glob("cad-sentiment/orig/*.tsv"),
                            *DATA.glob("imdb-contrast/*_original.tsv")]):  # fmt: skip
        paired = original.parent.parent / "new" / original.name
        if original.name.endswith("_original.tsv"):
            paired = original.with_name(original.name.replace("_original", "_contrast"))
        found += zip(read_tsv(original), read_tsv(paired), strict=True)
    return found


def jsonl(lines: Any) -> bytes:
    return "\n".join(json.dumps(line) for line in lines).encode()


def sets_jsonl(rows: int, found: list[Any]) -> bytes:
    def line(n: int) -> dict[str, Any]:
        original, contrast = found[n % len(found)]
        perturbation = {"fields": {"text": contrast["Text"]},
                        "label": contrast["Sentiment"].lower(), "tags": ["imdb"]}  # fmt: skip
        return {"original": {"id": f"imdb-{n}", "fields": {"text": original["Text"]},
                             "label": original["Sentiment"].lower()},
                "perturbations": [perturbation]}  # fmt: skip

    return jsonl(line(n) for n in range(rows))


def votes_jsonl(rows: int, found: list[Any]) -> bytes:
    rng, workers = random.Random(0), [f"w{k}" for k in range(40)]

    def line(n: int) -> dict[str, Any]:
        review = found[n % len(found)][0]
        distribution: dict[str, list[str]] = {}
        for worker in rng.sample(workers, 5):
            label = "positive" if rng.random() < 0.7 else "negative"
            distribution.setdefault(label, []).append(worker)
        return {"id": f"imdb-{n}", "fields": {"text": review["Text"]},
                "label_distribution": distribution}  # fmt: skip

    return jsonl(line(n) for n in range(rows))


def post(port: int, path: str, token: str, fields: dict[str, str], content: bytes) -> Any:
    """POST the form with the file; the answer's JSON (a 202's job, or the import's answer)."""
    boundary = uuid.uuid4().hex
    body = io.BytesIO()
    for name, value in fields.items():
        body.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                   f"{value}\r\n".encode())  # fmt: skip
    body.write(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
               'filename="imdb.jsonl"\r\nContent-Type: application/octet-stream\r\n\r\n'
               .encode())  # fmt: skip
    body.write(content + f"\r\n--{boundary}--\r\n".encode())
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=body.getvalue(),
        headers={"Authorization": f"Token {token}",
                 "Content-Type": f"multipart/form-data; boundary={boundary}"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=600) as response:
        return response.status, json.loads(response.read())


def follow(port: int, path: str, token: str) -> Any:
    """Poll the job until it finished: its answer."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}",
                                     headers={"Authorization": f"Token {token}"})  # fmt: skip
    while True:
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.loads(response.read())
        if answer["status"] in ("succeeded", "failed", "cancelled"):
            return answer
        time.sleep(POLL_SECONDS)


def cpu_seconds(*pids: int) -> float:
    """User and system CPU seconds of these processes and their children."""
    total = 0.0
    for pid in pids:
        process = psutil.Process(pid)
        for one in [process, *process.children(recursive=True)]:
            times = one.cpu_times()
            total += times.user + times.system
    return total


def here_and_backend() -> float:
    """CPU seconds of this process and of its PostgreSQL backend (on this machine)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    return cpu_seconds(os.getpid(), backend)


def drop_trigrams() -> None:
    """Drop the Data page's trigram indexes from the benchmark's database (migration 0023)."""
    from django.db import connection

    with connection.cursor() as cursor:
        for table in ("annotation_example", "annotation_perturbation"):
            cursor.execute(f"DROP INDEX IF EXISTS {table}_fields_trgm")
    connection.close()


def new_project(admin: Any, slug: str) -> Any:
    from annotation.projects import services

    return services.project_create(
        user=admin, name=slug, slug=slug, fields=[{"name": "text"}],
        labels=["positive", "negative"], tags=[{"name": "imdb"}],
    )  # fmt: skip


def upload(kind: str, slug: str, content: bytes, port: int, admin: Any) -> tuple[float, int]:
    """Upload `content` as `kind` into the project `slug` and follow its job until it
    succeeded: the seconds until the request answered, and the job's id."""
    from rest_framework.authtoken.models import Token

    token = Token.objects.get_or_create(user=admin)[0].key
    path, fields = KINDS[kind]
    started = time.perf_counter()
    status, answer = post(port, f"/api/projects/{slug}/{path}", token, fields, content)
    answered = time.perf_counter() - started
    assert status == 202, f"{kind}: answered {status} in the request, not queued: {answer}"
    done = follow(port, f"/api/projects/{slug}/imports/{answer['job']}/", token)
    assert done["status"] == "succeeded", f"{kind}: {done}"
    return answered, answer["job"]


def warm_up(kinds: list[str], files: dict[str, Any], port: int, admin: Any) -> None:
    """One small import of each kind, untimed: gunicorn and the worker load most of their
    code on their first request and task (the first import's request took 2.5-3.8 s, the
    next 0.4-0.8 s, at load 9-13), which no later import pays."""
    for kind in kinds:
        new_project(admin, f"warm-{kind}")
        upload(kind, f"warm-{kind}", files[kind](WARM_UP_ROWS), port, admin)


def through_api(
    kind: str,
    n: int,
    run: int,
    content: bytes,
    servers: tuple[int, int, int],
    admin: Any,
    indexed: bool,
) -> None:
    """One upload of `content` as `kind` into a new project, followed until it finished."""
    from django.core.files import File

    from annotation.imports.services.running import import_now
    from annotation.models import ImportJob

    slug = f"{kind}-{n}-{run}-{'trgm' if indexed else 'plain'}"
    new_project(admin, slug)
    port, *pids = servers
    cpu, load = cpu_seconds(*pids), os.getloadavg()[0]
    began, started = time.time(), time.perf_counter()
    answered, job_id = upload(kind, slug, content, port, admin)
    seen = time.perf_counter() - started
    job = ImportJob.objects.get(pk=job_id)
    assert job.started_at and job.finished_at
    cpu = cpu_seconds(*pids) - cpu
    parts = {
        "request": answered,
        "queue": (job.started_at - job.created_at).total_seconds(),
        "run": (job.finished_at - job.started_at).total_seconds(),
        "poll": seen - (job.finished_at.timestamp() - began),
    }
    rate = n / seen
    print(f"API {kind:>9} {n:>7} rows ({len(content) / 1e6:.1f} MB), run {run}: {seen:.2f} s, "
          f"{rate:,.0f} rows/s = {rate / LABEL_STUDIO_ROWS_PER_S:.2f}x Label Studio ("
          + ", ".join(f"{k} {v:.2f}" for k, v in parts.items())
          + f" s; gunicorn and worker CPU {cpu:.2f} s; load {load:.2f})", flush=True)  # fmt: skip
    local = new_project(admin, f"local-{slug}")
    same = File(io.BytesIO(content), name="imdb.jsonl")
    cpu, started = here_and_backend(), time.perf_counter()
    import_now(project=local, user=admin, kind=kind, files={"file": same}, options=job.options)
    said = rate_of(n, started)
    cpu = here_and_backend() - cpu
    print(f"    in-process, the same file: {said} (CPU {cpu:.2f} s with its PostgreSQL backend)",
          flush=True)  # fmt: skip


def api(kinds: list[str], sizes: list[int], runs: int, trigrams: str) -> None:
    import redis
    from django.contrib.auth.models import User
    from django.db import connection

    folder = Path(tempfile.mkdtemp(prefix="originals-import-"))
    print(f"files and logs in {folder}; load average {os.getloadavg()[0]:.2f} (2 cores)")
    redis.Redis.from_url(BROKER).flushdb()
    found = pairs()
    files = {"originals": lambda n: imdb_jsonl(n), "sets": lambda n: sets_jsonl(n, found),
             "votes": lambda n: votes_jsonl(n, found)}  # fmt: skip
    admin = User.objects.create(username="importer", is_staff=True)
    connection.close()
    env = {**os.environ, "DATABASE_URL": URL, "DEBUG": "0", "LOG_LEVEL": "WARNING",
           "CELERY_BROKER_URL": BROKER, "MEDIA_ROOT": str(folder / "media"),
           "CONTRASTLAB_VAR_DIR": str(folder / "var")}  # fmt: skip
    server, port = start_gunicorn({**env, "IMPORT_BACKGROUND_BYTES": str(256 * 1024)}, folder)
    worker = Worker(env, folder)
    passes = {"kept": [True], "dropped": [False], "both": [True, False]}[trigrams]
    try:
        warm_up(kinds, files, port, admin)
        for indexed in passes:
            if not indexed:
                drop_trigrams()
            print(f"-- the Data page's trigram indexes {'kept' if indexed else 'dropped'}")
            for kind in kinds:
                for n in sizes:
                    content = files[kind](n)
                    for run in range(1, runs + 1):
                        servers = (port, server.pid, worker.process.pid)
                        through_api(kind, n, run, content, servers, admin, indexed)
    finally:
        worker.stop()
        server.send_signal(signal.SIGTERM)
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--api", action="store_true", help="also import through the API")
    parser.add_argument("--api-only", action="store_true", help="skip the in-process figures")
    parser.add_argument("--runs", type=int, default=2, help="API runs of each kind and size")
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000])
    parser.add_argument("--kinds", nargs="+", choices=list(KINDS), default=list(KINDS))
    parser.add_argument(
        "--trigrams",
        choices=["kept", "dropped", "both"],
        default="kept",
        help="the Data page's trigram indexes: kept (as deployed), dropped, or both in turn",
    )
    args = parser.parse_args()
    if args.api:
        os.environ["IMPORT_MAX_BYTES"] = str(512 * 1024 * 1024)  # the 10x files, everywhere
    bench_database()
    if not args.api_only:
        in_process()
    if args.api:
        api(args.kinds, args.sizes, args.runs, args.trigrams)


if __name__ == "__main__":
    main()
