"""Profile of the validation hot path (issue 15): one validator's vote -> next cycles through
the API in-process (token auth, as the load clients use), with the SQL statements each cycle
runs and the functions where its time goes (cProfile).

It seeds the hot path's shape at a smaller scale (resolved items with 5 votes each plus a live
pool of open items), so that it runs in a minute:

    .venv/bin/python benchmarks/hot_path_profile.py [--resolved 20000] [--open 20000]
"""

import argparse
import cProfile
import io
import pstats
import time
from collections import Counter

import numpy as np
from seed import bench_database, seed_validation


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--resolved", type=int, default=20_000)
    parser.add_argument("--open", type=int, default=20_000)
    parser.add_argument("--cycles", type=int, default=300)
    args = parser.parse_args()

    bench_database()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from rest_framework.authtoken.models import Token

    project, clients = seed_validation(args.resolved, args.open, clients=2)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    token = Token.objects.create(user=clients[0]).key
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
    print(f"SQL statements in one vote -> next cycle: {len(queries)}")
    kinds = Counter(q["sql"].split()[0] for q in queries.captured_queries)
    print("  by kind:", dict(kinds))
    for q in queries.captured_queries:
        print(f"  {q['time']}s {q['sql'][:160]}")

    seconds = []
    for _ in range(args.cycles):
        started = time.perf_counter()
        cycle()
        seconds.append(time.perf_counter() - started)
    ms = np.array(seconds) * 1000
    cpu_started = time.process_time()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(args.cycles):
        cycle()
    profiler.disable()
    cpu = (time.process_time() - cpu_started) / args.cycles * 1000
    print(
        f"vote -> next: p50 {np.percentile(ms, 50):.1f} ms, p99 {np.percentile(ms, 99):.1f} ms "
        f"wall; this process's CPU under the profiler {cpu:.1f} ms per cycle"
    )
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
    print(out.getvalue())


if __name__ == "__main__":
    main()
