"""Agreement statistics on 500k votes (docs/performance.md target: under 0.25 s), against, in the
same run, the reads the statistics made before 2026-11-26 and a naive per-item Python
implementation. Reuses the validation benchmark's project when it is there, otherwise seeds
100k items with 5 votes each; `--items 1000000` imports a project ten times that size through
the vote import.

    .venv/bin/python benchmarks/stats_bench.py [--items 100000]
"""

import argparse
import random
import time
from collections import Counter

from seed import bench_database, seed_validation


def naive(project) -> dict:  # type: ignore[no-untyped-def]
    """What one would write first: one query per item, then plain Python loops."""
    from annotation.models import ValidationItem, Vote

    categories = project.all_labels
    rows = []
    for item in ValidationItem.objects.filter(project=project).only("id", "majority_label"):
        labels = list(Vote.objects.filter(item=item, counts=True).values_list("label", flat=True))
        rows.append((labels, item.majority_label))
    complete = [Counter(labels) for labels, _ in rows if len(labels) == 5]
    n = 5
    p_i = [sum(c[j] * (c[j] - 1) for j in categories) / (n * (n - 1)) for c in complete]
    p_j = [sum(c[j] for c in complete) / (len(complete) * n) for j in categories]
    p_e = sum(p * p for p in p_j)
    kappa = (sum(p_i) / len(p_i) - p_e) / (1 - p_e)
    rng = random.Random(1)
    f1s = []
    kept = [(list(labels), m) for labels, m in rows if m in project.labels and labels]
    for labels, _ in kept:
        rng.shuffle(labels)
    for a in range(5):
        per_label = []
        for label in project.labels:
            tp = sum(1 for r, m in kept if r[a] == label and m == label)
            pred = sum(1 for r, _ in kept if r[a] == label)
            gold = sum(1 for _, m in kept if m == label)
            p, r = (tp / pred if pred else 0), (tp / gold if gold else 0)
            per_label.append(2 * p * r / (p + r) if p + r else 0)
        f1s.append(sum(per_label) / len(per_label))
    return {"fleiss_kappa": kappa, "human_f1_macro": sum(f1s) / len(f1s)}


def previous_reads(project) -> int:  # type: ignore[no-untyped-def]
    """What the statistics read before items were read as groups and votes per validator and
    seconds were kept by triggers (2026-11-26): a row per item with its counts per label, and
    the votes' histogram per validator and seconds. Returns the rows read."""
    from django.db import connection

    labels = project.all_labels
    counts = ", ".join("COALESCE((label_votes->>%s)::int, 0)" for _ in labels)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, status, majority_label, split, gold_label, control_id IS NOT NULL, "
            f"{counts} FROM annotation_validationitem WHERE project_id = %s ORDER BY id",
            [*labels, project.pk],
        )
        items = len(cursor.fetchall())
        cursor.execute(
            "SELECT v.validator_id, v.seconds_spent, count(*) FROM annotation_vote v "
            "JOIN annotation_validationitem i ON i.id = v.item_id WHERE i.project_id = %s "
            "GROUP BY 1, 2",
            [project.pk],
        )
        return items + len(cursor.fetchall())


def seed_imported(items: int):  # type: ignore[no-untyped-def]
    """A project of `items` items with 5 votes each, imported as a user would (the vote
    import, 100k lines at a time)."""
    from vote_import import build_file

    from annotation.imports.services.votes import import_votes
    from annotation.projects import services

    project = services.project_create(
        user=None, name="Stats", slug=f"stats-{items}", fields=[{"name": "text"}],
        labels=["positive", "negative"],
    )  # fmt: skip
    rng = random.Random(0)
    for start in range(0, items, 100_000):
        data = build_file(min(100_000, items - start), rng, words=2, first=start)
        import_votes(project=project, user=None, data=data, source_name=f"{start}.jsonl")
        print(f"  imported {start + 100_000} items", flush=True)
    return project


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    args = parser.parse_args()
    bench_database(fresh=False)
    from django.db import connection

    from annotation.models import Project, Vote
    from annotation.validation.stats import project_stats

    slug = "bench" if args.items == 100_000 else f"stats-{args.items}"
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        if args.items == 100_000:
            project, _ = seed_validation(100_000, 0)
        else:
            project = seed_imported(args.items)
        with connection.cursor() as cursor:  # statistics for the planner, as autovacuum would
            cursor.execute("VACUUM ANALYZE")
    votes = Vote.objects.filter(item__project=project).count()
    print(f"project {project.slug}: {votes} votes")
    started = time.perf_counter()
    stats = project_stats(project)
    first = time.perf_counter() - started
    timings, before = [], []
    for _ in range(3):  # as a running server sees it: connection open, code loaded
        started = time.perf_counter()
        stats = project_stats(project)
        timings.append(time.perf_counter() - started)
        started = time.perf_counter()
        rows = previous_reads(project)
        before.append(time.perf_counter() - started)
    ours, reads = sorted(timings)[1], sorted(before)[1]
    print(
        f"project_stats: {ours:.3f} s, median of 3 after a first call of {first:.2f} s "
        f"(target < 0.25 s at 500k votes: {ours / 0.25:.2f}x of the budget); "
        f"kappa {stats['fleiss_kappa']}, alpha {stats['krippendorff_alpha']}, "
        f"human F1 {stats['human_f1']['macro']}"
    )
    print(
        f"the reads alone of the statistics before 2026-11-26 ({rows} rows): {reads:.3f} s, "
        f"median of 3 (ratio {ours / reads:.2f}x)"
    )
    if args.items > 100_000:
        print("naive per-item implementation: not run beyond 100k items")
        return
    started = time.perf_counter()
    slow = naive(project)
    baseline = time.perf_counter() - started
    print(f"naive per-item implementation: {baseline:.2f} s; kappa {slow['fleiss_kappa']:.4f}")
    print(f"speed-up: {baseline / ours:.1f}x")


if __name__ == "__main__":
    main()
