"""Agreement statistics on 500k votes (docs/performance.md target: under 2 s), against a naive
per-item Python implementation in the same run. Reuses the validation benchmark's database when
it is there, otherwise seeds 100k items with 5 votes each.

    .venv/bin/python benchmarks/stats_bench.py
"""

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


def main() -> None:
    bench_database(fresh=False)
    from annotation.models import Project, Vote
    from annotation.validation.stats import project_stats

    project = Project.objects.filter(slug="bench").first()
    if project is None:
        project, _ = seed_validation(100_000, 0)
        from django.db import connection

        with connection.cursor() as cursor:  # statistics for the planner, as autovacuum would
            cursor.execute("VACUUM ANALYZE")
    votes = Vote.objects.filter(item__project=project).count()
    print(f"project {project.slug}: {votes} votes")
    started = time.perf_counter()
    stats = project_stats(project)
    first = time.perf_counter() - started
    timings = []
    for _ in range(3):  # as a running server sees it: connection open, code loaded
        started = time.perf_counter()
        stats = project_stats(project)
        timings.append(time.perf_counter() - started)
    ours = sorted(timings)[1]
    print(
        f"project_stats: {ours:.2f} s, median of 3 after a first call of {first:.2f} s "
        f"(target < 1 s: {ours:.2f}x of the budget); "
        f"kappa {stats['fleiss_kappa']}, alpha {stats['krippendorff_alpha']}, "
        f"human F1 {stats['human_f1']['macro']}"
    )
    started = time.perf_counter()
    slow = naive(project)
    baseline = time.perf_counter() - started
    print(f"naive per-item implementation: {baseline:.2f} s; kappa {slow['fleiss_kappa']:.4f}")
    print(f"speed-up: {baseline / ours:.1f}x")


if __name__ == "__main__":
    main()
