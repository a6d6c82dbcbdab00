"""Next-item latency as the open pool grows (issue 15): one validator, in-process, at 10k,
100k and 1M open items (perturbations submitted, no votes yet), each size in a fresh database.

For each size it prints p50/p99 of
  - `next_item` (the lease query; the validator holds no lease, so it selects every time);
  - the API's vote -> next round trip (Django's test client, session auth, no network);
  - the validate page's "items left" count;
and the ratio of each p50 to the same figure at the smallest size, measured in the same run.

    .venv/bin/python benchmarks/scaling.py [--sizes 10000 100000 1000000]
"""

import argparse
import json
import subprocess
import sys
import time

import numpy as np
from seed import bench_database, seed_validation


def percentiles(seconds: list[float]) -> dict:
    ms = np.array(seconds) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 2),
            "p99_ms": round(float(np.percentile(ms, 99)), 2)}  # fmt: skip


def measure(size: int) -> dict:
    bench_database(fresh=True)
    from django.db import connection
    from django.test import Client

    from annotation.models import Lease
    from annotation.validation.services.queue import items_left, next_item

    started = time.monotonic()
    project, (validator,) = seed_validation(0, size, validators=0, clients=1)
    seeded = time.monotonic() - started
    with connection.cursor() as cursor:  # statistics, as a live database has them
        cursor.execute("VACUUM ANALYZE")
    lease_times = []
    for _ in range(200):
        started = time.perf_counter()
        item = next_item(project=project, validator=validator)
        lease_times.append(time.perf_counter() - started)
        assert item is not None
        Lease.objects.filter(validator=validator).delete()
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(validator)
    base = f"/api/projects/{project.slug}/validation"
    item = client.get(f"{base}/next/").json()["item"]
    cycle_times = []
    for _ in range(200):
        started = time.perf_counter()
        response = client.post(
            f"{base}/{item}/vote/", {"label": "negative"}, content_type="application/json"
        )
        cycle_times.append(time.perf_counter() - started)
        assert response.status_code == 201, response.content
        item = response.json()["next"]["item"]
    left_times = []
    for _ in range(20):
        started = time.perf_counter()
        items_left(project=project, validator=validator)
        left_times.append(time.perf_counter() - started)
    return {
        "open_items": size,
        "seeding_s": round(seeded),
        "next_item": percentiles(lease_times),
        "vote_and_next": percentiles(cycle_times),
        "items_left": percentiles(left_times),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--measure", type=int)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return
    rows = []
    for size in args.sizes:
        out = subprocess.run(
            [sys.executable, __file__, "--measure", str(size)], capture_output=True, text=True
        )
        if out.returncode:
            sys.exit(out.stderr[-3000:])
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        first, row = rows[0], rows[-1]
        ratios = {k: round(row[k]["p50_ms"] / first[k]["p50_ms"], 2)
                  for k in ("next_item", "vote_and_next", "items_left")}  # fmt: skip
        print(json.dumps({**row, f"p50 ratio to {first['open_items']} open": ratios}), flush=True)


if __name__ == "__main__":
    main()
