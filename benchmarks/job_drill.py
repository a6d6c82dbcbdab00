"""Job drill: every kind of worker job outlives the death of its worker, and finishes once.

A background originals import (real IMDb reviews from ../shared/data, over again, above
IMPORT_BACKGROUND_BYTES), an evaluation run (the tests' slow `python` rule model over a few
thousand released examples) and an inoculation analysis (a tiny random BERT, built as the tests
build it) each run twice on a prefork Celery worker with one child: once its main process is
SIGKILLed (a new worker is started; its sweep takes the job over once the heartbeat is stale),
once its child only (the main process forks another; the redelivered message waits while the
heartbeat is fresh). The drill measures the seconds from the kill until the job finished, and
checks that it succeeded with each row stored once: originals by external id (and one import
batch), predictions by example and role, inoculation points by size and learning rate. A run
or an analysis that succeeded twice would replace its rows, so for them "once" is the one job,
succeeded, with every row once. Then a gunicorn sync worker is SIGKILLed halfway through a slow
upload of the same file: no job may exist for it and nothing of it may be left under
MEDIA_ROOT/imports/ (Django's temporary upload files, elsewhere, are reported); the same upload
sent again must finish once.

It uses the benchmark database, Redis db 12 and a folder under /tmp (media, the tiny model, the
logs); the workers' EVALUATION_STALE_SECONDS is --stale. It exits non-zero if a check fails.

    cd benchmarks && ../.venv/bin/python job_drill.py [--stale 15] [--rows 8000] [--sets 1500]

Found (2026-11-26, code of 73c94a5, --stale 15, two runs while a test suite shared the two
cores, load 2-6): every job succeeded on its second attempt with every row once (8,000
originals and one batch; 2,400 predictions; 4 inoculation points), and no child outlived its
killed main process (Celery sets PDEATHSIG). Seconds from the kill to done: main process
killed, import 19.7 / 20.6, run 40.7 / 39.2, analysis 108.1 / 56.0 (a new worker's start, the
sweep's wait of stale + 1 s, then the job from scratch); child killed, import 17.5 / 16.1, run
36.6 / 38.4, analysis 99.0 / 49.8 (the RunBusy retry's wait of stale, then the job). The
analysis's own attempt took 35-89 s under that load against 10-14 s on a quieter machine. The
killed upload left no job and nothing under MEDIA_ROOT/imports/, but Django's temporary file of
the half-received upload (3.9 MB) stays in the web worker's TMPDIR; sent again, it finished once
(4.1 / 2.2 s after the kill).
"""

import argparse
import contextlib
import http.client
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import DATA, ROOT, read_tsv, require_data
from seed import URL, bench_database, seed_export

BROKER = "redis://127.0.0.1:6379/12"
IMPORT_OPTIONS = {"fmt": "jsonl", "mapping": {}, "default_split": "test", "labels": {},
                  "skip_bad": False}  # fmt: skip
UPLOAD_RATE, CHUNK = 2 * 1024 * 1024, 64 * 1024  # the slow client: bytes a second, a send
Counts = tuple[int, int, int, int]  # rows stored, rows expected, stored twice, successes


@dataclass
class Drill:
    kind: str
    target: str
    seconds: float | None  # from the kill until the job finished
    status: str
    attempts: int
    rows: int
    expected: int
    duplicates: int
    successes: int
    problem: str = ""

    @property
    def passed(self) -> bool:
        return (self.status == "succeeded" and self.rows == self.expected
                and self.duplicates == 0 and self.successes == 1 and not self.problem)  # fmt: skip


def wait_for(predicate: Callable[[], object], timeout: float, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


def children(pid: int) -> list[int]:
    """The processes `pid` forked, from any of its threads (a pool may fork from a thread)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class Worker:
    """The drill's prefork Celery worker with one child, on both queues; a log per start."""

    def __init__(self, env: dict[str, str], folder: Path):
        self.env, self.folder, self.starts = env, folder, itertools.count(1)
        self.orphans: list[int] = []
        self.process = self.start()

    def start(self) -> subprocess.Popen:
        log = self.folder / f"worker-{next(self.starts)}.log"
        command = [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q",
                   "evaluation,imports", "--pool", "prefork", "--concurrency", "1",
                   "--loglevel", "info", "--without-heartbeat", "--without-gossip",
                   "--without-mingle"]  # fmt: skip
        with log.open("w") as out:
            process = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT
            )
        started = wait_for(lambda: " ready." in log.read_text() and children(process.pid), 120)
        assert started, f"the worker did not start: {log}"
        return process

    def kill(self, target: str) -> str:
        """SIGKILL the main process (then start another worker) or its child; what was seen."""
        main, child = self.process.pid, children(self.process.pid)[0]
        if target == "child":
            os.kill(child, signal.SIGKILL)
            forked = wait_for(lambda: set(children(main)) - {child}, 30)
            return f"child {child} killed; " + ("a new child forked" if forked else "NO new child")
        os.kill(main, signal.SIGKILL)
        self.process.wait()
        if wait_for(lambda: not alive(child), 5):
            note = f"main {main} killed, its child {child} died with it"
        else:
            self.orphans.append(child)
            note = f"main {main} killed; its child {child} OUTLIVED it"
        self.process = self.start()
        return note + "; a new worker started"

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for pid in self.orphans:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def imdb_jsonl(rows: int) -> bytes:
    """`rows` real IMDb reviews (CAD's and the contrast sets' files, over again) as originals."""
    require_data("cad-sentiment")
    paths = sorted([*DATA.glob("cad-sentiment/*/*.tsv"), *DATA.glob("imdb-contrast/*.tsv")])
    reviews = [review for path in paths for review in read_tsv(path)]
    return "\n".join(
        json.dumps({"id": f"imdb-{n}", "text": reviews[n % len(reviews)]["Text"],
                    "label": reviews[n % len(reviews)]["Sentiment"].lower()})
        for n in range(rows)
    ).encode()  # fmt: skip


def project_named(slug: str) -> Any:
    from annotation.models import Project

    fields, labels = [{"name": "text", "kind": "text", "editable": True}], ["positive", "negative"]
    return Project.objects.create(name=slug, slug=slug, fields=fields, labels=labels)


def queue_import(project: Any, content: bytes) -> Any:
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.db import transaction

    from annotation.imports.background import import_or_queue

    upload = SimpleUploadedFile("imdb.jsonl", content)
    with transaction.atomic():  # sent once this commits, as in a request
        job, _ = import_or_queue(project=project, user=None, kind="originals",
                                 files={"file": upload}, options=IMPORT_OPTIONS)  # fmt: skip
    assert job is not None, "the import ran in the request: raise --rows"
    return job


def import_counts(job: Any, rows: int) -> Counts:
    """Successes: the import batches committed in the job's project."""
    from django.db.models import Count

    from annotation.models import Example, ImportBatch

    stored = Example.objects.filter(project=job.project).aggregate(
        n=Count("id"), ids=Count("external_id", distinct=True)
    )
    batches = ImportBatch.objects.filter(project=job.project).count()
    return stored["n"], rows, stored["n"] - stored["ids"], batches


def run_counts(run: Any) -> Counts:
    predictions = run.predictions.order_by()
    n = predictions.count()
    distinct = predictions.values("example", "role").distinct().count()
    return n, run.total, n - distinct, int(run.status == "succeeded")


def analysis_counts(analysis: Any) -> Counts:
    points = analysis.result.get("points", [])
    keys = {(p["size"], p["learning_rate"]) for p in points}
    expected = len(analysis.params["sizes"]) * len(analysis.params["learning_rates"])
    return len(points), expected, len(points) - len(keys), int(analysis.status == "succeeded")


def drill(worker: Worker, kind: str, target: str, job: Any, running: Callable[[Any], bool],
          counts: Callable[[Any], Counts], timeout: float) -> Drill:  # fmt: skip
    """Wait until `job` is `running`, kill the worker's `target`, wait until the job finished."""
    from django.utils import timezone

    def now() -> Any:
        job.refresh_from_db()
        return job

    if not wait_for(lambda: running(now()) or job.finished, 180):
        sys.exit(f"{kind}: never seen running ({job.status})")
    if job.finished:
        print(f"{kind} / {target}: FINISHED BEFORE THE KILL ({job.status}); make it larger")
        return Drill(kind, target, None, job.status, job.attempts, *counts(job), "not killed")
    seen = f"running (attempt {job.attempts}, {job.done}/{job.total} done)"
    killed_at = timezone.now()
    note = worker.kill(target)
    wait_for(lambda: now().finished, timeout, step=0.2)
    seconds = (job.finished_at - killed_at).total_seconds() if job.finished else None
    result = Drill(kind, target, seconds, job.status, job.attempts, *counts(job))
    took = (job.finished_at - job.started_at).total_seconds() if job.finished else 0
    after = f"in {seconds:.1f} s after the kill" if seconds is not None else "NOT FINISHED"
    print(f"{kind} / {target}: {seen}; {note}; {job.status} {after}, attempt {job.attempts} "
          f"took {took:.1f} s; {result.rows}/{result.expected} rows, {result.duplicates} "
          f"duplicates{'; error: ' + job.error if job.error else ''}", flush=True)  # fmt: skip
    return result


def upload(port: int, path: str, token: str, content: bytes,
           kill: Callable[[], None] | None = None) -> tuple[int | None, str]:  # fmt: skip
    """POST the file as a form; with `kill`, slowly (UPLOAD_RATE), calling it halfway. The
    answer's status and body, or (None, the error the client saw)."""
    boundary = uuid.uuid4().hex
    head = (f'--{boundary}\r\nContent-Disposition: form-data; name="format"\r\n\r\njsonl\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="imdb.jsonl"'
            "\r\nContent-Type: application/octet-stream\r\n\r\n")  # fmt: skip
    body = head.encode() + content + f"\r\n--{boundary}--\r\n".encode()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.putrequest("POST", path)
        connection.putheader("Authorization", f"Token {token}")
        connection.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders()
        for start in range(0, len(body), CHUNK):
            if kill is not None:
                if start >= len(body) // 2:
                    kill()
                    kill = None
                time.sleep(CHUNK / UPLOAD_RATE)
            connection.send(body[start : start + CHUNK])
        response = connection.getresponse()
        return response.status, response.read().decode()
    except OSError as error:
        return None, f"{error.__class__.__name__}: {error}"
    finally:
        connection.close()


def start_gunicorn(env: dict[str, str], folder: Path) -> tuple[subprocess.Popen, int]:
    """gunicorn with one sync worker on a free port; Django's temporary files in folder/tmp."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (folder / "tmp").mkdir()
    command = [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind",
               f"127.0.0.1:{port}", "--workers", "1", "--worker-class", "sync"]  # fmt: skip
    with (folder / "gunicorn.log").open("w") as log:
        server = subprocess.Popen(command, cwd=ROOT, env={**env, "TMPDIR": str(folder / "tmp")},
                                  stdout=log, stderr=subprocess.STDOUT)  # fmt: skip

    def listening() -> bool:
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", port)) == 0

    assert wait_for(lambda: children(server.pid) and listening(), 60), "gunicorn did not start"
    return server, port


def upload_drill(env: dict[str, str], folder: Path, content: bytes, timeout: float) -> Drill:
    """A gunicorn worker SIGKILLed halfway through an upload, then the upload sent again."""
    from django.contrib.auth.models import User
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from annotation.models import ImportJob, Membership

    project = project_named("drill-upload")
    admin = User.objects.create(username="drill-admin")
    Membership.objects.create(project=project, user=admin, role="admin")
    token = Token.objects.create(user=admin).key
    path, rows = f"/api/projects/{project.slug}/examples/import/", content.count(b"\n") + 1
    imports = Path(env["MEDIA_ROOT"]) / "imports"
    before = set(imports.glob("*/*"))
    server, port = start_gunicorn(env, folder)
    killed: dict[str, Any] = {}

    def kill() -> None:
        killed["pid"], killed["at"] = children(server.pid)[0], timezone.now()
        os.kill(killed["pid"], signal.SIGKILL)

    try:
        status, said = upload(port, path, token, content, kill)
        forked = wait_for(lambda: set(children(server.pid)) - {killed["pid"]}, 30)
        jobs = ImportJob.objects.filter(project=project).count()
        left = sorted(str(p.relative_to(imports)) for p in set(imports.glob("*/*")) - before)
        temps = [(p.name, p.stat().st_size) for p in (folder / "tmp").iterdir()]
        print(f"upload / gunicorn worker: {killed['pid']} killed halfway through "
              f"{len(content) / 1e6:.1f} MB; the client saw {status or said[:80]}; "
              f"{'a new worker forked' if forked else 'NO new gunicorn worker'}; import jobs for "
              f"it: {jobs}; left under MEDIA_ROOT/imports/: {left or 'nothing'}; Django's "
              f"temporary files left in TMPDIR: {temps or 'none'}", flush=True)  # fmt: skip
        status, said = upload(port, path, token, content)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()
    if status != 202:
        print(f"upload again: {status} {said[:300]}")
        return Drill("originals upload", "gunicorn worker", None, str(status), 0, 0, rows, 0, 0)
    job = ImportJob.objects.get(pk=json.loads(said)["job"])

    def finished() -> bool:
        job.refresh_from_db()
        return job.finished

    wait_for(finished, timeout, step=0.2)
    counts = import_counts(job, rows)
    seconds = (job.finished_at - killed["at"]).total_seconds() if job.finished else None
    jobs_now = ImportJob.objects.filter(project=project).count()
    print(f"upload again: 202, job {job.pk} {job.status}; {counts[0]}/{rows} rows, {counts[2]} "
          f"duplicates, {counts[3]} batch(es), {jobs_now} job(s) in the project",
          flush=True)  # fmt: skip
    wrong = {"a job of the killed upload": jobs, "its files under imports/": left,
             f"{jobs_now} jobs": jobs_now != 1}  # fmt: skip
    problem = ", ".join(what for what, bad in wrong.items() if bad)
    return Drill("originals upload", "gunicorn worker", seconds, job.status, job.attempts,
                 *counts, problem)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stale", type=int, default=15, help="EVALUATION_STALE_SECONDS")
    parser.add_argument("--rows", type=int, default=8000, help="IMDb rows in the import file")
    parser.add_argument("--sets", type=int, default=1500, help="contrast sets in the release")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="job-drill-"))
    settings_env = {"CELERY_BROKER_URL": BROKER, "MEDIA_ROOT": str(folder / "media"),
                    "MODELS_DIR": str(folder / "models"),
                    "CONTRASTLAB_VAR_DIR": str(folder / "var"),
                    "EVALUATION_STALE_SECONDS": str(args.stale)}  # fmt: skip
    os.environ.update(settings_env)
    bench_database()
    import redis
    from django.conf import settings
    from django.db import connection

    from annotation.releases.services import release_create
    from evaluation.analyses.services import analysis_create
    from evaluation.models import ModelSpec
    from evaluation.runs.services import evaluation_enqueue
    from tests.evaluation.conftest import build_tiny_classifier

    redis.Redis.from_url(BROKER).flushdb()
    content = imdb_jsonl(args.rows)
    assert len(content) > settings.IMPORT_BACKGROUND_BYTES, "raise --rows: not a background import"
    project = seed_export(args.sets)
    release = release_create(project=project, user=None, version="drill")
    slow = ModelSpec.objects.create(project=project, name="slow", kind="python", batch_size=120,
                                    source="tests.evaluation.rule_models:slow_keyword")  # fmt: skip
    tiny = ModelSpec.objects.create(
        project=project, name="tiny", kind="hf-sequence-classification", batch_size=16,
        max_length=64, device="cpu", source=str(build_tiny_classifier(folder / "models" / "tiny")),
    )  # fmt: skip
    inoculation = {"release": release.pk, "model": tiny.pk, "pool_split": "dev", "max_epochs": 3,
                   "sizes": [0, 100, 200, 300], "learning_rates": [1e-3]}  # fmt: skip
    print(f"code: {ROOT}; load average {os.getloadavg()[0]:.2f}", flush=True)
    print(f"{len(content) / 1e6:.1f} MB import of {args.rows} IMDb rows; release of "
          f"{release.counts['sets']} sets; workers: prefork, one child, EVALUATION_STALE_SECONDS="
          f"{args.stale} (--stale), JOB_MAX_ATTEMPTS={settings.JOB_MAX_ATTEMPTS}; files and logs "
          f"in {folder}", flush=True)  # fmt: skip
    connection.close()
    env = {**os.environ, "DATABASE_URL": URL, "DEBUG": "0", "LOG_LEVEL": "WARNING",
           "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}  # fmt: skip
    timeout = 6 * args.stale + 240
    worker = Worker(env, folder)
    results = []
    try:
        for target in ("main", "child"):
            job = queue_import(project_named(f"drill-import-{target}"), content)
            results.append(drill(worker, "originals import", target, job,
                                 lambda j: j.status == "running",
                                 lambda j: import_counts(j, args.rows), timeout))  # fmt: skip
            run = evaluation_enqueue(release=release, model=slow, split="test", user=None)
            results.append(drill(worker, "evaluation run", target, run,
                                 lambda r: r.status == "running" and r.done > 0, run_counts,
                                 timeout))  # fmt: skip
            analysis = analysis_create(project=project, user=None, kind="inoculation",
                                       params=inoculation)  # fmt: skip
            results.append(drill(worker, "inoculation analysis", target, analysis,
                                 lambda a: a.status == "running" and a.done > 0, analysis_counts,
                                 timeout))  # fmt: skip
        results.append(upload_drill(env, folder, content, timeout))
    finally:
        worker.stop()
    print("\n| kind | kill target | seconds kill -> done | attempts | rows stored | duplicates "
          "| check |\n|---|---|---|---|---|---|---|")  # fmt: skip
    for r in results:
        seconds = f"{r.seconds:.1f}" if r.seconds is not None else "not done"
        check = "ok" if r.passed else f"FAILED: {r.problem or r.status}"
        print(f"| {r.kind} | {r.target} | {seconds} | {r.attempts} | {r.rows}/{r.expected} "
              f"| {r.duplicates} | {check} |")  # fmt: skip
    print(f"load average at the end {os.getloadavg()[0]:.2f} (2 cores)")
    if not all(r.passed for r in results):
        sys.exit(f"job drill FAILED; logs in {folder}")
    print("job drill passed")


if __name__ == "__main__":
    main()
