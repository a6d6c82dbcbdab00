"""Release export of 100k contrast sets (docs/performance.md: under 4 s, 1M under 45 s, flat memory)

Each measurement runs in its own process so that peak RSS is its own: first Django alone
(the floor), then ContrastLab's release (a label project: read by COPY into Arrow), each beside
the same release forced onto the rows' path (which free-text projects and SQLite take; up to
100k sets unless --rows), then a run timing its phases, then a naive export that builds every
set in memory and writes one JSON document (up to 100k sets). A missing project is seeded in
SQL (benchmarks/seed.py: 1M sets in about 4 minutes of inserts, then the trigram indexes).

    BENCH_DB=h50x_100k .venv/bin/python benchmarks/release_export.py --pairs 2
    BENCH_DB=h50x_1m .venv/bin/python benchmarks/release_export.py --sets 1000000

`--before DIR` runs the same release from another checkout (the code before a change, from
`git archive`) after each of ours, on the same database: time, CPU and zip size as ratios.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import OUT, cpu_seconds, peak_rss_mb
from seed import bench_database, export_slug, seed_export


def timed_phases() -> dict[str, float]:
    """Wall seconds per phase of release_create, gathered by wrapping its steps."""
    from annotation.releases import bundle, services

    phases: dict[str, float] = {}

    def wrap(owner, name: str, phase: str) -> None:  # type: ignore[no-untyped-def]
        inner = getattr(owner, name)

        def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                phases[phase] = phases.get(phase, 0) + time.perf_counter() - started

        setattr(owner, name, timed)

    from annotation.releases import copied
    from annotation.releases import sql as release_sql

    wrap(services, "choose", "choosing (rows' path: perturbations and vote counts)")
    wrap(release_sql, "choose", "choosing (SQL, into a temporary table)")
    wrap(release_sql, "vote_histogram", "votes' histogram (validators, times)")
    files = (
        "sets, files and entries (COPY into Arrow and INSERT ... SELECT beside the files' "
        "threads; rows' path: DB reads"
    )
    wrap(bundle.BundleWriter, "write_data", f"{files} and the entries' COPY beside them)")
    wrap(copied.Columns, "per_split", "agreement per split (from the chunks' tallies)")
    wrap(services, "release_statistics", "statistics (rows' path; other files zipped meanwhile)")
    wrap(services, "figures", "statistics (validators, times; other files zipped meanwhile)")
    wrap(bundle.BundleWriter, "finish", "waiting for the zip; card, manifest, hash")
    return phases


def measure(mode: str, sets: int) -> None:
    bench_database(fresh=False)
    from django.conf import settings
    from django.db import connection

    from annotation.models import Perturbation, Project
    from annotation.releases.services import release_create

    phases = timed_phases() if mode == "phases" else {}
    if mode == "rows":  # the rows' path, which the code before this change always took
        from annotation.releases import copied

        copied.applies = lambda project: False

    settings.MEDIA_ROOT = OUT / "media"
    project = Project.objects.get(slug=export_slug(sets))
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pids = {os.getpid(), cursor.fetchone()[0]}  # this process and its PostgreSQL backend
    cpu = cpu_seconds(pids)
    started = time.perf_counter()
    if mode in ("release", "phases", "rows"):
        release = release_create(
            project=project,
            user=None,
            version=f"bench-{time.time():.0f}",
            min_agreement={"dev": 0, "test": 0},
        )
        size = (Path(settings.MEDIA_ROOT) / release.bundle).stat().st_size
    elif mode == "naive":
        records = [
            {
                "set_id": p.pivot.external_id,
                "original": p.pivot.fields,
                "label": p.label,
                "fields": p.fields,
                "tags": [t.name for t in p.tags.all()],
            }
            for p in Perturbation.objects.filter(project=project, status="accepted")
            .select_related("pivot")
            .prefetch_related("tags")
        ]
        path = OUT / "naive.json"
        path.write_text(json.dumps(records))
        size = path.stat().st_size
    else:
        size = 0
    seconds = time.perf_counter() - started
    if phases:
        phases["the rest (pseudonyms, commit)"] = seconds - sum(phases.values())
    result = {
        "seconds": seconds,
        "cpu_seconds": cpu_seconds(pids) - cpu,
        "rss_mb": peak_rss_mb(),
        "bytes": size,
        "phases": phases,
    }
    print(json.dumps(result))


def run(mode: str, sets: int, code: Path | None = None) -> dict:
    """One measurement in a process of its own: this checkout's, or another's (`code`)."""
    script = code / "benchmarks" / "release_export.py" if code else Path(__file__)
    out = subprocess.run(
        [sys.executable, str(script), "--measure", mode, "--sets", str(sets)],
        capture_output=True,
        text=True,
        check=True,
        cwd=script.parent,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def above(result: dict, floor: dict) -> float:
    return result["rss_mb"] - floor["rss_mb"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", type=int, default=100_000)
    parser.add_argument("--measure")
    parser.add_argument("--phases", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--pairs", type=int, default=1, help="releases, each beside the rows' path")
    parser.add_argument(
        "--before",
        type=Path,
        help="a checkout of the code before (e.g. from git archive): its release beside ours",
    )
    parser.add_argument(
        "--rows",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the rows' path too (default: up to 100k sets)",
    )
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, args.sets)
        return
    bench_database(fresh=False)
    from annotation.models import Project

    if not Project.objects.filter(slug=export_slug(args.sets)).exists():
        print(f"seeding {args.sets} sets")
        seed_export(args.sets)
        from django.db import connection

        with connection.cursor() as cursor:  # statistics for the planner, as autovacuum would
            cursor.execute("VACUUM ANALYZE")
    rows = args.rows if args.rows is not None else args.sets <= 100_000
    floor = run("none", args.sets)
    pairs = [
        (
            run("release", args.sets),
            run("rows", args.sets) if rows else None,
            run("release", args.sets, args.before) if args.before else None,
        )
        for _ in range(args.pairs)
    ]
    split: dict[str, Any] = (
        run("phases", args.sets) if args.phases else {"seconds": 0, "phases": {}}
    )
    goal = 4 * args.sets / 100_000 if args.sets <= 100_000 else 45 * args.sets / 1_000_000
    print(f"Django alone: peak RSS {floor['rss_mb']:.0f} MB")
    for ours, before, old in pairs:
        print(
            f"streamed release: {ours['seconds']:.1f} s ({ours['cpu_seconds']:.1f} s of CPU, "
            f"with its PostgreSQL backend's), peak RSS {ours['rss_mb']:.0f} MB, "
            f"zip {ours['bytes'] / 1e6:.1f} MB (target: {goal:.0f} s for {args.sets:,} sets -> "
            f"{ours['seconds'] / goal:.2f}x)"
        )
        if before is not None:
            print(
                f"  the rows' path (free text's, SQLite's), next: {before['seconds']:.1f} s "
                f"({before['cpu_seconds']:.1f} s of CPU), peak RSS {before['rss_mb']:.0f} MB: "
                f"time {ours['seconds'] / before['seconds']:.2f}x, "
                f"CPU {ours['cpu_seconds'] / before['cpu_seconds']:.2f}x"
            )
        if old is not None:
            print(
                f"  the code before ({args.before}), next: {old['seconds']:.1f} s "
                f"({old['cpu_seconds']:.1f} s of CPU), peak RSS {old['rss_mb']:.0f} MB, zip "
                f"{old['bytes'] / 1e6:.1f} MB: time {ours['seconds'] / old['seconds']:.2f}x, "
                f"CPU {ours['cpu_seconds'] / old['cpu_seconds']:.2f}x, "
                f"zip {ours['bytes'] / old['bytes']:.2f}x"
            )
    print(f"where the time goes (a separate run of the release: {split['seconds']:.1f} s):")
    for phase, seconds in split["phases"].items():
        print(f"  {seconds:5.1f} s  {phase}")
    if args.sets > 100_000:  # the naive export holds every set in memory: ~12 GB at 1M sets
        print("naive in-memory export: not run beyond 100k sets")
        return
    ours = pairs[0][0]
    naive = run("naive", args.sets)
    print(
        f"naive in-memory export: {naive['seconds']:.1f} s, peak RSS {naive['rss_mb']:.0f} MB, "
        f"{naive['bytes'] / 1e6:.1f} MB of JSON"
    )
    print(
        f"ratio to naive: time {ours['seconds'] / naive['seconds']:.2f}x, "
        f"memory above Django {above(ours, floor) / max(above(naive, floor), 1):.2f}x"
    )


if __name__ == "__main__":
    main()
