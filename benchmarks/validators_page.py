"""The Validators page's server time with DynaSent's crowd (1,280 workers, issue 28) and ten
times it, after a vote import: the paginated page (50 rows) against the same page rendering
every validator in one table (what it did before), in the same run.

    .venv/bin/python benchmarks/validators_page.py [--validators 1280] [--items 4000]
"""

import argparse
import json
import statistics
import time

from seed import bench_database


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--validators", type=int, default=1280)
    parser.add_argument("--items", type=int, default=4000, help="imported items, 5 votes each")
    args = parser.parse_args()
    bench_database(fresh=True)
    from django.contrib.auth.models import User
    from django.test import Client

    from annotation import pagination
    from annotation.imports.services.votes import import_votes
    from annotation.projects.services import project_create

    admin = User.objects.create_superuser("bench-admin", "a@example.org", "pw")
    project = project_create(
        user=admin, name="Crowd", slug="crowd", labels=["negative", "positive"],
        fields=[{"name": "text", "kind": "text", "editable": True}],
    )  # fmt: skip
    workers = [f"w{n}" for n in range(args.validators)]
    lines = []
    for n in range(args.items):
        crowd = [workers[(n * 5 + k) % len(workers)] for k in range(5)]
        votes = {"positive": crowd[:3], "negative": crowd[3:]}
        lines.append({"id": f"r{n}", "fields": {"text": f"r {n}"}, "label_distribution": votes})
    data = "\n".join(json.dumps(line) for line in lines).encode()
    started = time.perf_counter()
    import_votes(project=project, user=admin, data=data, source_name="crowd.jsonl")
    print(f"{args.items} items, {args.validators} validators imported in "
          f"{time.perf_counter() - started:.1f} s")  # fmt: skip

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(admin)

    def timed(url: str) -> tuple[float, int]:
        assert client.get(url).status_code == 200  # warm
        times, size = [], 0
        for _ in range(5):
            started = time.perf_counter()
            size = len(client.get(url).content)
            times.append(time.perf_counter() - started)
        return statistics.median(times), size

    paged, paged_bytes = timed("/p/crowd/validators/")
    sorted_s, _ = timed("/p/crowd/validators/?sort=-agreement&page=3")
    searched, _ = timed("/p/crowd/validators/?q=w12")
    defaults = pagination.table_page.__defaults__
    pagination.table_page.__defaults__ = (10**9,)  # every row on one page, as before
    try:
        whole, whole_bytes = timed("/p/crowd/validators/")
    finally:
        pagination.table_page.__defaults__ = defaults
    print(
        f"paginated page: {paged * 1000:.0f} ms ({paged_bytes / 1024:.0f} KiB); sorted by "
        f"agreement, page 3: {sorted_s * 1000:.0f} ms; searched: {searched * 1000:.0f} ms"
    )
    print(f"every validator on one page (before): {whole * 1000:.0f} ms "
          f"({whole_bytes / 1024:.0f} KiB); ratio {whole / paged:.1f}x")  # fmt: skip


if __name__ == "__main__":
    main()
