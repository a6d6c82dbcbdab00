"""Import of originals (docs/workflows.md) at 20k and 200k JSONL rows (40-word texts), in-process on
PostgreSQL: parse, check every row, insert in one transaction.

Beside it: Label Studio CE's figure measured on this kind of machine (20k texts in 3.9 s,
5,183 tasks/s; ../shared/ENVIRONMENT.md), and, in the same run, one INSERT per row
(`Example.objects.create`, 2,000 rows, rolled back).

    .venv/bin/python benchmarks/originals_import.py
"""

import json
import random
import time

from seed import bench_database, text

LABEL_STUDIO_ROWS_PER_S = 5183


def main() -> None:
    bench_database()
    from django.db import transaction

    from annotation.imports.originals import import_examples
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
        rate = n / (time.perf_counter() - started)
        print(f"{n:>7} rows: {rate:,.0f} rows/s = {rate / LABEL_STUDIO_ROWS_PER_S:.2f}x "
              f"Label Studio's {LABEL_STUDIO_ROWS_PER_S:,} tasks/s")  # fmt: skip
    started = time.perf_counter()
    with transaction.atomic():
        for i in range(2000):
            Example.objects.create(project=project, external_id=f"one-{i}",
                                   fields={"text": text(rng, 40)}, label="positive")  # fmt: skip
        one_by_one = 2000 / (time.perf_counter() - started)
        transaction.set_rollback(True)
    print(f"baseline, one INSERT per row: {one_by_one:,.0f} rows/s")


if __name__ == "__main__":
    main()
