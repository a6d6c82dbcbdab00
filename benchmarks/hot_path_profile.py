"""Profile of the validation hot path (issue 15): one validator's vote -> next cycles through
the API in-process (token auth, as the load clients use), with the SQL statements each cycle
runs and the functions where its time goes (cProfile).

It seeds the hot path's shape at a smaller scale (resolved items with 5 votes each plus a live
pool of open items), so that it runs in a minute:

    .venv/bin/python benchmarks/hot_path_profile.py [--resolved 20000] [--open 20000]

Old code against new, on a busy machine: CPU time per cycle (this process's, and its
PostgreSQL backend's) is what other work leaves alone. Run this script from each checkout in
turn on one database (`--reuse --no-profile`; each validator votes an item once, so pass a
different --client to each run): `git worktree add /tmp/before <commit>`, copy this script
into it, then alternate `/tmp/before/benchmarks/hot_path_profile.py` and this one.
"""

import argparse
import cProfile
import io
import pstats
import time
from collections import Counter

import numpy as np
from common import cpu_seconds
from seed import bench_database, seed_validation


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--resolved", type=int, default=20_000)
    parser.add_argument("--open", type=int, default=20_000)
    parser.add_argument("--cycles", type=int, default=300)
    parser.add_argument("--reuse", action="store_true", help="reuse the seeded database")
    parser.add_argument("--client", type=int, default=0, help="which seeded client votes")
    parser.add_argument("--no-profile", action="store_true", help="no cProfile pass")
    parser.add_argument("--gold-rate", type=float, default=0.0, help="gold checks (gates on)")
    args = parser.parse_args()

    bench_database(fresh=not args.reuse)
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from rest_framework.authtoken.models import Token

    from annotation.models import Project

    if args.reuse and Project.objects.filter(slug="bench").exists():
        project = Project.objects.get(slug="bench")
        clients = list(User.objects.filter(username__startswith="client").order_by("id"))
    else:
        project, clients = seed_validation(args.resolved, args.open, clients=args.client + 2)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    project.settings = {**project.settings, "gold_rate": args.gold_rate, "gold_min_accuracy": 0}
    project.save()
    if args.gold_rate:
        from annotation.crowd import pool

        pool.pool_refresh(project)
    token = Token.objects.get_or_create(user=clients[args.client])[0].key
    client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Token {token}")
    base = f"/api/projects/{project.slug}/validation"
    state = {"item": client.get(f"{base}/next/").json()["item"]}

    def cycle() -> None:
        response = client.post(
            f"{base}/{state['item']}/vote/", {"label": "negative"}, content_type="application/json"
        )
        assert response.status_code == 201, response.content
        state["item"] = response.json()["next"]["item"]

    for _ in range(20):  # warm the connection and the code
        cycle()
    with CaptureQueriesContext(connection) as queries:
        cycle()
    statements = len(queries)  # read now: each request clears the connection's log
    print(f"SQL statements in one vote -> next cycle: {statements}")
    kinds = Counter(q["sql"].split()[0] for q in queries.captured_queries)
    print("  by kind:", dict(kinds))
    for q in queries.captured_queries:
        print(f"  {q['time']}s {q['sql'][:160]}")

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    seconds = []
    cpu, pg_cpu = time.process_time(), cpu_seconds({backend})
    for _ in range(args.cycles):
        started = time.perf_counter()
        cycle()
        seconds.append(time.perf_counter() - started)
    cpu = (time.process_time() - cpu) / args.cycles * 1000
    pg_cpu = (cpu_seconds({backend}) - pg_cpu) / args.cycles * 1000
    ms = np.array(seconds) * 1000
    print(
        f"vote -> next, {args.cycles} cycles: p50 {np.percentile(ms, 50):.1f} ms, p99 "
        f"{np.percentile(ms, 99):.1f} ms wall; CPU per cycle: this process {cpu:.2f} ms, its "
        f"PostgreSQL backend {pg_cpu:.2f} ms; {statements} statements"
    )
    if args.no_profile:
        return
    cpu_started = time.process_time()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(args.cycles):
        cycle()
    profiler.disable()
    cpu = (time.process_time() - cpu_started) / args.cycles * 1000
    print(f"this process's CPU under the profiler {cpu:.1f} ms per cycle")
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
    print(out.getvalue())


if __name__ == "__main__":
    main()
