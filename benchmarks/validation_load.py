"""Validation hot path under load (docs/performance.md): 32 concurrent validators loop vote -> vote
(each vote's response carries the next item; "next" below is the GET that starts a loop)
against gunicorn on PostgreSQL, over a project seeded with 100k resolved perturbations and
500k votes plus open items. Reports p50/p99 per endpoint, votes/s and over-assigned items,
next to a one-client baseline measured in the same run.

    .venv/bin/python benchmarks/validation_load.py [--resolved 100000] [--seconds 60]

With --baseline-code DIR (a checkout of the code before: `git worktree add DIR <commit>`), each
of --rounds rounds runs this tree's server and DIR's on the same database, in alternating order,
each at saturation and paced at --rate: the ratio of each figure is read within a round, so that
a busy machine's load weighs on both alike. --gates turns the gold checks on in the project
(gold_rate 0.1, pausing nobody: the clients answer at random); without it they are off.

Each code's run in a comparison starts from the same database: the seeded one, kept as a
template ({BENCH_DB}_seeded) and copied back before each run (--no-restore keeps the old way, each
run on what the runs before it left: fewer open items, dead rows, with autovacuum off here). More
checkouts alternate with --code NAME=DIR (e.g. this tree with one change taken out); each round
rotates their order; --reuse starts from that template too, when there is one (every run that
seeds keeps it, so that a large seeding is paid once). Each run prints
the load average, CPU and buffers read per vote (what other work on the machine leaves alone),
the checkpoints PostgreSQL ran during it, when its slowest votes started, and the dead row
versions it left. --log-slow MS logs the benchmark database's statements slower than MS ms
with their plans (auto_explain), and its lock waits longer than MS ms, in PostgreSQL's
log. --port and $BENCH_CACHE_URL (throttling's Redis) keep concurrent runs apart.

With --seed-api the project is built as a user builds it, through the API (a vote import of the
resolved items, a set import of the open pool), with no ANALYZE but the imports' own; the load
then runs again after a manual ANALYZE, for the ratio.
"""

import argparse
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from common import ROOT, cpu_seconds
from seed import DB, URL, bench_database, seed_through_api, seed_validation

CACHE_URL = os.environ.get("BENCH_CACHE_URL", "redis://127.0.0.1:6379/13")
SEEDED = f"{DB}_seeded"


def client_loop(
    token: str, port: int, until: float, out: dict, rng: random.Random, interval: float
) -> None:
    """A validator's loop: GET next once, then vote; each vote's response carries the next
    item (one round trip per vote), so GET next runs again only when it says none is left.
    With an `interval`, votes start on a schedule (one every `interval` seconds) instead of
    back to back."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    item = None
    due = time.monotonic() + rng.random() * interval
    while time.monotonic() < until:
        if interval:
            time.sleep(max(0.0, due - time.monotonic()))
            due += interval
        if item is None:
            started = time.perf_counter()
            connection.request("GET", "/api/projects/bench/validation/next/", headers=headers)
            response = connection.getresponse()
            body = response.read()
            out["next"].append(time.perf_counter() - started)
            if response.status == 204:
                out["empty"] += 1
                break
            item = json.loads(body)["item"]
        vote = {"label": rng.choice(["negative", "negative", "positive"]), "seconds_spent": 5}
        started = time.perf_counter()
        connection.request(
            "POST",
            f"/api/projects/bench/validation/{item}/vote/",
            body=json.dumps(vote),
            headers=headers,
        )
        response = connection.getresponse()
        following = json.loads(response.read()).get("next") if response.status < 300 else None
        out["vote"].append(time.perf_counter() - started)
        out["vote_at"].append(started)
        out["status"][response.status] = out["status"].get(response.status, 0) + 1
        item = following["item"] if following else None


def processes() -> dict[int, tuple[str, int]]:
    """pid -> (command name, parent pid) of every process."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                head, tail = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)
            except OSError:
                continue
            out[int(entry)] = (head.split("(", 1)[1], int(tail.split()[1]))
    return out


def cpu_by_part(server: int) -> dict[str, float]:
    """CPU seconds so far of gunicorn (the server and its workers), PostgreSQL's backends of
    the benchmark's database (others' work on a shared machine left out), and this process
    (the load generator)."""
    table = processes()
    tree = {server} | {pid for pid, (_, parent) in table.items() if parent == server}
    postgres = {
        pid for pid, (name, _) in table.items() if name.startswith("postgres") and ours(pid)
    }
    return {
        "gunicorn": cpu_seconds(tree),
        "postgres": cpu_seconds(postgres),
        "load generator": sum(os.times()[:2]),
    }


def ours(pid: int) -> bool:
    """Whether a PostgreSQL backend serves the benchmark's database (its title names it)."""
    try:
        return f" {DB} ".encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def run_clients(tokens: list[str], port: int, seconds: float, rate: float = 0) -> dict:
    results: list[dict] = [
        {"next": [], "vote": [], "vote_at": [], "status": {}, "empty": 0} for _ in tokens
    ]
    until = time.monotonic() + seconds
    interval = len(tokens) / rate if rate else 0
    threads = [
        threading.Thread(target=client_loop, args=(t, port, until, r, random.Random(i), interval))
        for i, (t, r) in enumerate(zip(tokens, results, strict=True))
    ]
    started = time.monotonic()
    started_clock = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    merged: dict = {"next": [], "vote": [], "vote_at": [], "status": {}, "elapsed": elapsed}
    for r in results:
        merged["next"] += r["next"]
        merged["vote"] += r["vote"]
        merged["vote_at"] += [at - started_clock for at in r["vote_at"]]
        for code, n in r["status"].items():
            merged["status"][code] = merged["status"].get(code, 0) + n
    return merged


def profile_summary(path: Path) -> None:
    """Where gunicorn's CPU went, from py-spy's collapsed stacks: the share of samples per
    layer (the innermost frame's package) and the top innermost functions."""
    layers: Counter[str] = Counter()
    leaves: Counter[str] = Counter()
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        leaf = frames[-1]
        leaves[leaf] += int(count)
        packages = ["psycopg2", "rest_framework", "django/db", "django", "gunicorn", "annotation"]
        layer = next((p for p in packages if any(p in f for f in frames[-1:])), "other")
        layers[layer] += int(count)
    total = sum(layers.values())
    print("gunicorn's CPU samples by the innermost frame's package (py-spy):")
    print("  " + ", ".join(f"{k} {v / total:.0%}" for k, v in layers.most_common()))
    print("top innermost functions:")
    for leaf, n in leaves.most_common(12):
        print(f"  {n / total:5.1%}  {leaf}")


def cpu_per_vote(before: dict, after: dict, figures: dict, seconds: float) -> str:
    votes = figures["votes_per_s"] * seconds
    return ", ".join(f"{k} {(after[k] - before[k]) / votes * 1000:.1f} ms" for k in after)


def report(name: str, r: dict) -> dict:
    figures = {"votes_per_s": r["status"].get(201, 0) / r["elapsed"]}
    for endpoint in ("next", "vote"):
        ms = np.array(r[endpoint]) * 1000
        figures[f"{endpoint}_p50_ms"] = float(np.percentile(ms, 50)) if len(ms) else None
        figures[f"{endpoint}_p99_ms"] = float(np.percentile(ms, 99)) if len(ms) else None
    print(
        f"{name}: "
        + ", ".join(f"{k} {v:.1f}" for k, v in figures.items() if v is not None)
        + f", statuses {r['status']}, load {os.getloadavg()[0]:.1f}"
    )
    return figures


def tail(r: dict, over_ms: float = 50) -> str:
    """When the votes slower than `over_ms` started (seconds into the run): clustered in a
    second or two, something stalled everyone (a checkpoint, a lock); spread, it is queueing."""
    times = zip(r["vote_at"], np.array(r["vote"]) * 1000, strict=True)
    slow = sorted(((ms, at) for at, ms in times if ms > over_ms), reverse=True)
    seconds = Counter(int(at) for _, at in slow)
    worst = ", ".join(f"{ms:.0f} ms at {at:.1f} s" for ms, at in slow[:5])
    spread = " ".join(f"{s}s:{n}" for s, n in sorted(seconds.items()))
    return f"{len(slow)} votes over {over_ms:.0f} ms, per second {{{spread}}}; slowest {worst}"


def admin_read(statement: str, *params: Any) -> Any:
    """The first column of a statement's first row (None without one), read outside the
    benchmark database."""
    import psycopg2

    admin = psycopg2.connect("dbname=postgres user=postgres host=127.0.0.1")
    try:
        with admin.cursor() as cursor:
            cursor.execute(statement, params)
            row = cursor.fetchone()
            return row[0] if row else None
    finally:
        admin.close()


def checkpoints() -> int:
    """Checkpoints PostgreSQL has run so far (timed and requested, the whole server's)."""
    return int(admin_read("SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter"))


def blocks() -> int:
    """Buffers the benchmark database's backends have read so far (hit or not): unlike time,
    what other work on the machine leaves alone (backends report it at most once a second)."""
    read = "SELECT blks_hit + blks_read FROM pg_stat_database WHERE datname = %s"
    return int(admin_read(read, DB))


def admin_run(*statements: str) -> None:
    """Statements run outside the benchmark database (which they may drop and create)."""
    import psycopg2
    from django.db import connections

    connections.close_all()
    admin = psycopg2.connect("dbname=postgres user=postgres host=127.0.0.1")
    admin.autocommit = True
    with admin.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
    admin.close()


def keep_seeded() -> None:
    """The seeded database, kept as a template for restore()."""
    admin_run(
        f"DROP DATABASE IF EXISTS {SEEDED} WITH (FORCE)",
        f"CREATE DATABASE {SEEDED} TEMPLATE {DB} STRATEGY FILE_COPY",
    )


def seeded_kept() -> bool:
    return admin_read("SELECT 1 FROM pg_database WHERE datname = %s", SEEDED) is not None


def restore(log_slow: int | None) -> None:
    """The benchmark database as seeded: a file copy of the template (new files, no dead rows,
    its statistics), so that each code's run starts from the same state."""
    admin_run(
        f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)",
        f"CREATE DATABASE {DB} TEMPLATE {SEEDED} STRATEGY FILE_COPY",
    )
    if log_slow is not None:
        log_statements(log_slow)


def log_statements(ms: int) -> None:
    """Log the benchmark database's statements slower than `ms` with their plans
    (auto_explain, nested statements included), and its lock waits longer than `ms`."""
    admin_run(
        f"ALTER DATABASE {DB} SET session_preload_libraries = 'auto_explain'",
        f"ALTER DATABASE {DB} SET auto_explain.log_min_duration = {int(ms)}",
        f"ALTER DATABASE {DB} SET auto_explain.log_nested_statements = on",
        f"ALTER DATABASE {DB} SET log_lock_waits = on",
        f"ALTER DATABASE {DB} SET deadlock_timeout = {int(ms)}",
    )


def start_server(args: argparse.Namespace, port: int, code: Path = ROOT) -> subprocess.Popen:
    """Gunicorn as Compose runs it (throttling included), running the checkout `code`; large
    imports in the request, as the seeding sends them without a worker."""
    env = {
        **os.environ,
        "DATABASE_URL": URL,
        "DEBUG": "0",
        "DATABASE_CONN_MAX_AGE": "60",
        "LOG_LEVEL": "WARNING",
        "IMPORT_BACKGROUND_BYTES": str(1 << 30),
        "IMPORT_BACKGROUND_LINES": str(1 << 30),
        "CACHE_URL": CACHE_URL,  # throttling counts, as Compose keeps them
        "PYTHONPATH": str(code),
    }
    command = [sys.executable, "-m", "gunicorn", "config.wsgi:application",
               "--bind", f"127.0.0.1:{port}", "--workers", str(args.workers),
               "--worker-class", args.worker_class, "--threads", str(args.threads),
               "--timeout", "600", "--log-level", "warning"]  # fmt: skip
    server = subprocess.Popen(command, cwd=code, env=env)
    time.sleep(4)
    return server


def set_gates(project: Any, on: bool) -> None:
    """Gold checks at 10% (pausing nobody), or no gate at all."""
    from annotation.crowd import pool

    gold = {"gold_rate": 0.1, "gold_min_accuracy": 0.0} if on else {"gold_rate": 0.0}
    project.settings = {**project.settings, **gold, "qualification_items": 0}
    project.save()
    if on:
        print(f"gates on: gold checks at 10%, a pool of {pool.pool_refresh(project)} gold items")


def cpu_ms(before: dict, after: dict, run: dict) -> dict[str, float]:
    """CPU ms per vote of gunicorn and of PostgreSQL's backends in a run: unlike wall times, what
    a busy machine's other work leaves alone."""
    votes = max(1, run["status"].get(201, 0))
    return {f"cpu_{k}_ms": (after[k] - before[k]) / votes * 1000 for k in ("gunicorn", "postgres")}


def code_order(codes: list[tuple[str, Path]], round_: int) -> list[tuple[str, Path]]:
    """Two codes alternate which runs first; more rotate."""
    if len(codes) == 2:
        return codes if round_ % 2 == 0 else codes[::-1]
    shift = round_ % len(codes)
    return codes[shift:] + codes[:shift]


def measure(args: argparse.Namespace, tokens: list[str], port: int, name: str, code: Path) -> dict:
    """One code's run: warm, at saturation, then paced."""
    if args.restore:
        restore(args.log_slow)
    marks, since = checkpoints(), time.time()
    print(f"{time.strftime('%H:%M:%S')} {name} starts ({code}), load {os.getloadavg()[0]:.1f}")
    server = start_server(args, port, code)
    try:
        run_clients(tokens[:1], port, 3)  # warm: connections, prepared statements
        before, read = cpu_by_part(server.pid), blocks()
        loaded = run_clients(tokens, port, args.seconds)
        figures = report(f"{name}, {args.clients} clients", loaded)
        figures.update(cpu_ms(before, cpu_by_part(server.pid), loaded))
        time.sleep(1.5)  # backends report their figures once a second
        figures["buffers_per_vote"] = (blocks() - read) / max(1, loaded["status"].get(201, 0))
        before, read = cpu_by_part(server.pid), blocks()
        paced = run_clients(tokens, port, args.seconds, args.rate or 100)
        paced_figures = report(f"{name}, paced at {args.rate or 100:.0f} votes/s", paced)
        paced_figures.update(cpu_ms(before, cpu_by_part(server.pid), paced))
        time.sleep(1.5)
        paced_figures["buffers_per_vote"] = (blocks() - read) / max(1, paced["status"].get(201, 0))
        print(
            "  CPU and buffers per vote, saturation / paced: "
            + ", ".join(
                f"{k} {figures[k]:.2f} / {paced_figures[k]:.2f}"
                for k in ("cpu_gunicorn_ms", "cpu_postgres_ms", "buffers_per_vote")
            )
        )
        print(f"  paced: {tail(paced)}")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()
    print(f"  checkpoints during the run: {checkpoints() - marks}")
    if args.restore:
        print(f"  dead row versions the run left: {dead_rows(since)}")
    return {**figures, **{f"paced_{k}": v for k, v in paced_figures.items()}}


def dead_rows(since: float) -> str:
    """Dead row versions of the tables each vote rewrites, as the run left them (its backends
    report them as they exit), and the resolved items they came with."""
    import psycopg2

    time.sleep(1)
    tables = ("annotation_validationitem", "annotation_validatorstatus", "annotation_lease")
    connection = psycopg2.connect(f"dbname={DB} user=postgres host=127.0.0.1")
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT relname, n_dead_tup FROM pg_stat_user_tables WHERE relname = ANY(%s)",
                [list(tables)],
            )
            dead = dict(cursor.fetchall())
            cursor.execute(
                "SELECT count(*) FROM annotation_validationitem"
                " WHERE status = 'resolved' AND resolved_at > to_timestamp(%s)",
                [since],
            )
            resolved = cursor.fetchone()[0]
    finally:
        connection.close()
    return ", ".join(f"{t.split('_')[1]} {dead.get(t, 0)}" for t in tables) + (
        f"; {resolved} items resolved"
    )


def compare(args: argparse.Namespace, tokens: list[str], port: int) -> None:
    """This tree against --baseline-code (and any --code), alternating, --rounds times."""
    codes = [("before", Path(args.baseline_code).resolve()), ("after", ROOT)]
    codes += [(name, Path(path).resolve()) for name, path in (c.split("=", 1) for c in args.code)]
    rows: dict[str, list[dict]] = {name: [] for name, _ in codes}
    for round_ in range(args.rounds):
        for name, code in code_order(codes, round_):
            rows[name].append(measure(args, tokens, port, f"round {round_ + 1}, {name}", code))
    for name in rows:
        if name == "before":
            continue
        print(f"{name} / before, per round (below 1: less time, or fewer votes/s):")
        for key in rows[name][0]:
            pairs = [(a[key], b[key]) for a, b in zip(rows[name], rows["before"], strict=True)]
            ratios = " / ".join(f"{a / b:.2f}x" for a, b in pairs if a and b)
            new = " / ".join(f"{a:.1f}" for a, _ in pairs if a)
            old = " / ".join(f"{b:.1f}" for _, b in pairs if b)
            print(f"  {key}: {ratios}  ({name} {new}; before {old})")


def over_assigned(project: Any) -> int:
    """Items with more votes than votes_per_item (5): there must be none."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM (SELECT item_id FROM annotation_vote v"
            " JOIN annotation_validationitem i ON i.id = v.item_id WHERE i.project_id = %s"
            " GROUP BY item_id HAVING count(*) > 5) t",
            [project.pk],
        )
        over = cursor.fetchone()[0]
        cursor.execute("SELECT count(*) FROM annotation_validationitem WHERE counted_votes > 5")
        return int(over + cursor.fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--resolved", type=int, default=100_000)
    parser.add_argument("--open", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=6)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--worker-class", default="sync", help="gunicorn's, as in Compose")
    parser.add_argument(
        "--rate", type=float, default=0, help="also run the clients paced at this many votes/s"
    )
    parser.add_argument("--py-spy", help="record gunicorn with py-spy into this file")
    parser.add_argument("--baseline-code", help="a checkout of the code before, to alternate with")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the comparison")
    parser.add_argument(
        "--code", action="append", default=[], help="NAME=DIR: another checkout to alternate"
    )
    parser.add_argument(
        "--no-restore",
        dest="restore",
        action="store_false",
        help="run each code on what the run before left (default: each from the seeded state)",
    )
    parser.add_argument("--log-slow", type=int, help="log statements and lock waits over MS ms")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--gates", action="store_true", help="gold checks on (10%%)")
    parser.add_argument(
        "--trigger-baseline",
        action="store_true",
        help="then run the clients again with the votes' triggers (VoteSeconds) off",
    )
    parser.add_argument(
        "--reuse", action="store_true", help="reuse the last run's database (its open items)"
    )
    parser.add_argument(
        "--seed-api",
        action="store_true",
        help="seed through the API (a vote import, a set import) with no manual ANALYZE, then "
        "measure again after one",
    )
    args = parser.parse_args()

    bench_database(fresh=not args.reuse)
    if args.reuse and seeded_kept():
        restore(None)  # the seeded state, not what the last run left
    from django.contrib.auth.models import User
    from django.db import connection
    from rest_framework.authtoken.models import Token

    from annotation.models import Project, ValidationItem, Vote

    port = args.port
    server = None
    seeded = False
    if args.seed_api:
        server = start_server(args, port)
        print(f"seeding through the API: {args.resolved} resolved items, {args.open} open sets")
        project, clients = seed_through_api(f"http://127.0.0.1:{port}", args.resolved, args.open)
    elif args.reuse and Project.objects.filter(slug="bench").exists():
        project = Project.objects.get(slug="bench")
        clients = list(User.objects.filter(username__startswith="client").order_by("id"))
    else:
        print(f"seeding {args.resolved} resolved items (5 votes each), {args.open} open items")
        started = time.monotonic()
        project, clients = seed_validation(args.resolved, args.open, clients=args.clients)
        seeded = True
        print(f"seeded in {time.monotonic() - started:.0f} s")
    tokens = [Token.objects.get_or_create(user=u)[0].key for u in clients[: args.clients]]
    set_gates(project, args.gates)
    seeded_votes = Vote.objects.count()
    print(f"seeded {Vote.objects.count()} votes on {ValidationItem.objects.count()} items")
    if not args.seed_api:
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        if args.restore and (seeded or args.baseline_code):
            keep_seeded()  # for a comparison's runs, and for a later --reuse
        if args.baseline_code:
            compare(args, tokens, port)
            print(f"over-assigned items: {over_assigned(project)}")
            return
        server = start_server(args, port)
    assert server is not None
    try:
        before = cpu_by_part(server.pid)
        baseline = report("baseline, 1 client, 10 s", run_clients(tokens[:1], port, 10))
        print(
            "CPU per vote, 1 client: " + cpu_per_vote(before, cpu_by_part(server.pid), baseline, 10)
        )
        spy = None
        if args.py_spy:
            command = [str(Path(sys.executable).parent / "py-spy"), "record", "--pid",
                       str(server.pid), "--subprocesses", "--format", "raw", "--nonblocking",
                       "--output", args.py_spy, "--duration", str(int(args.seconds))]  # fmt: skip
            spy = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        before = cpu_by_part(server.pid)
        loaded = report(
            f"{args.clients} clients, {args.seconds:.0f} s", run_clients(tokens, port, args.seconds)
        )
        after = cpu_by_part(server.pid)
        if spy is not None:
            spy.wait()
            profile_summary(Path(args.py_spy))
        print(
            "CPU per vote under load: "
            + cpu_per_vote(before, after, loaded, args.seconds)
            + f" (2 cores give {2000 / loaded['votes_per_s']:.1f} ms per vote at this rate)"
        )
        if args.seed_api:
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
            analysed = report(
                f"after a manual ANALYZE, {args.clients} clients, {args.seconds:.0f} s",
                run_clients(tokens, port, args.seconds),
            )
            print(
                "seeded through the API, without / with a manual ANALYZE: votes/s "
                f"{loaded['votes_per_s']:.0f} / {analysed['votes_per_s']:.0f} "
                f"({loaded['votes_per_s'] / analysed['votes_per_s']:.2f}x)"
            )
        if args.trigger_baseline:
            # The same clients with VoteSeconds' triggers off (migration 0020): what they cost
            # a vote. The table is wrong afterwards; this database is the benchmark's own.
            with connection.cursor() as cursor:
                cursor.execute("ALTER TABLE annotation_vote DISABLE TRIGGER USER")
            try:
                bare = report(
                    f"without VoteSeconds' triggers, {args.clients} clients, {args.seconds:.0f} s",
                    run_clients(tokens, port, args.seconds),
                )
            finally:
                with connection.cursor() as cursor:
                    cursor.execute("ALTER TABLE annotation_vote ENABLE TRIGGER USER")
            print(
                "with / without the triggers: votes/s "
                f"{loaded['votes_per_s']:.0f} / {bare['votes_per_s']:.0f} "
                f"({loaded['votes_per_s'] / bare['votes_per_s']:.2f}x)"
            )
        if args.rate:
            report(
                f"{args.clients} clients paced at {args.rate:.0f} votes/s, {args.seconds:.0f} s",
                run_clients(tokens, port, args.seconds, args.rate),
            )
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()
    over = over_assigned(project)
    print(f"votes now: {Vote.objects.count()} (seeded {seeded_votes}); over-assigned items: {over}")
    print(
        f"targets: p99 < 50 ms -> next {loaded['next_p99_ms']:.1f} ms "
        f"({loaded['next_p99_ms'] / 50:.2f}x of target), vote {loaded['vote_p99_ms']:.1f} ms "
        f"({loaded['vote_p99_ms'] / 50:.2f}x); >= 300 votes/s -> {loaded['votes_per_s']:.0f} "
        f"({loaded['votes_per_s'] / 300:.2f}x); 0 over-assigned -> {over}"
    )
    print(
        "ratio to the 1-client baseline: next p50 "
        f"{loaded['next_p50_ms'] / baseline['next_p50_ms']:.2f}x, "
        f"votes/s {loaded['votes_per_s'] / baseline['votes_per_s']:.2f}x"
    )


if __name__ == "__main__":
    main()
