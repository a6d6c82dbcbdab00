"""The Data page's server time at 100k and 1M perturbations (issue 37: under 300 ms at 1M for a
filter and a page), beside the page-number pagination every other list uses (Django's
Paginator: a COUNT and an OFFSET), measured in the same run on the same database.

The project is shaped as users make one: originals from 20 imports of 5% each, one perturbation
per original in five statuses, two tags, two splits, ten authors, a validation item with five
votes' counts on each resolved one. Seeded in SQL (INSERT ... SELECT generate_series), then
analysed. Each figure is the median of 5 in-process requests (Django's test client: server time,
no network), after one warm-up.

    .venv/bin/python benchmarks/data_page.py --rows 100000
    .venv/bin/python benchmarks/data_page.py --rows 1000000
"""

import argparse
import statistics
import time
from typing import Any

from seed import bench_database

STATUSES = ["accepted", "submitted", "rejected", "disputed", "no_majority"]


def seed(rows: int) -> Any:
    from django.contrib.auth.models import User
    from django.db import connection

    from annotation.models import ImportBatch, Project, Tag

    slug = f"data-{rows}"
    found = Project.objects.filter(slug=slug).first()
    if found is not None:
        return found
    project = Project.objects.create(
        name=f"Data page, {rows:,} rows", slug=slug, labels=["positive", "negative"],
        fields=[{"name": "text", "kind": "text", "editable": True}],
    )  # fmt: skip
    User.objects.get_or_create(username="bench-admin", is_staff=True)
    authors = [User.objects.get_or_create(username=f"bench-expert{n}")[0] for n in range(10)]
    tags = [Tag.objects.create(project=project, name=n) for n in ("negation", "quantifier")]
    batches = [
        ImportBatch.objects.create(
            project=project,
            source_name=f"part-{n}.jsonl",
            format="jsonl",
            row_count=rows // 20,
            sha256="",
        )
        for n in range(20)
    ]
    start = time.perf_counter()
    with connection.cursor() as c:
        c.execute(
            """INSERT INTO annotation_example
                 (project_id, external_id, fields, label, answers, split, metadata, batch_id)
               SELECT %s, 'ex-' || g, jsonb_build_object('text', 'review ' || g || ' was good'),
                      CASE WHEN g %% 2 = 0 THEN 'positive' ELSE 'negative' END, '[]',
                      CASE WHEN g %% 10 = 0 THEN 'dev' ELSE 'test' END, '{}',
                      %s + (g * 20 / (%s + 1))
               FROM generate_series(1, %s) g""",
            [project.pk, batches[0].pk, rows, rows],
        )
        c.execute(
            """INSERT INTO annotation_perturbation
                 (project_id, pivot_id, author_id, batch_id, external_id, fields, label, answers,
                  majority_answers, rationale, status, guideline_version, seconds_spent,
                  wall_seconds, edit_distance, tokens_changed, allow_large_edit, majority_label,
                  created_at, updated_at, submitted_at)
               SELECT e.project_id, e.id, %s + (e.id %% 10), e.batch_id, '',
                      jsonb_build_object('text', 'review ' || e.id || ' was bad'),
                      CASE WHEN e.label = 'positive' THEN 'negative' ELSE 'positive' END,
                      '[]', '[]', '', (%s::text[])[1 + abs(hashtext(e.id::text)) %% 5], 0, 30, 30,
                      0.2, 1, false, '',
                      now(), now(), now()
               FROM annotation_example e WHERE e.project_id = %s""",
            [authors[0].pk, STATUSES, project.pk],
        )
        c.execute(
            """INSERT INTO annotation_perturbation_tags (perturbation_id, tag_id)
               SELECT p.id, CASE WHEN abs(hashtext(p.id::text || 't')) %% 3 = 0 THEN %s ELSE %s END
               FROM annotation_perturbation p WHERE p.project_id = %s""",
            [tags[1].pk, tags[0].pk, project.pk],
        )
        c.execute(
            """INSERT INTO annotation_validationitem
                 (id, project_id, perturbation_id, author_id, external_id, fields, split,
                  gold_label, gold_answers, majority_answers, status, counted_votes, label_votes,
                  extra_votes, majority_label, created_at)
               SELECT 4294967296 + p.id, p.project_id, p.id, p.author_id, '', p.fields, 'test',
                      p.label, '[]', '[]',
                      CASE WHEN p.status = 'submitted' THEN 'open' ELSE 'resolved' END,
                      CASE WHEN p.status = 'submitted' THEN 2 ELSE 5 END,
                      jsonb_build_object(p.label, 3, 'positive', 2), 0, '', now()
               FROM annotation_perturbation p WHERE p.project_id = %s""",
            [project.pk],
        )
        c.execute("ANALYZE")
    print(f"seeded {rows:,} originals and perturbations in {time.perf_counter() - start:.1f} s")
    return project


def median_ms(client: Any, url: str) -> tuple[float, int]:
    client.get(url)
    times = []
    for _ in range(5):
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return statistics.median(times), len(response.content)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--undo", action="store_true", help="then undo one import (5%%)")
    args = parser.parse_args()
    bench_database(fresh=False)
    from django.contrib.auth.models import User
    from django.core.paginator import Paginator
    from django.test import Client

    from annotation.data import records
    from annotation.models import Perturbation, Project

    project = seed(args.rows)
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(User.objects.get(username="bench-admin"))
    middle = Perturbation.objects.filter(project=project).order_by("id")[args.rows // 2].pk
    batch = project.import_batches.order_by("id")[10].pk
    base = f"/p/{project.slug}/data/"
    cases = {
        "first page": "",
        "status=rejected": "status=rejected",
        "split=dev": "split=dev",
        "tag=quantifier": "tag=quantifier",
        "author": "author=bench-expert3",
        "import batch (5%)": f"batch={batch}",
        "status+tag+split": "status=disputed&tag=quantifier&split=dev",
        "a page in the middle": f"after={middle}",
        "originals, batch": f"kind=originals&batch={batch}",
        "search (an id)": "q=ex-777",
        "search (a text, 1 row)": f"q=review {args.rows // 3 + 7} was",
        "search (a text, every row)": "q=WAS BAD",
        "originals, search (a text)": f"kind=originals&q=review {args.rows // 3 + 7} was",
    }
    print(f"Data page, {args.rows:,} perturbations, server time (median of 5):")
    for name, query in cases.items():
        ms, size = median_ms(client, f"{base}?{query}")
        print(f"  {name:<24} {ms:7.1f} ms  {size / 1024:6.1f} KiB")

    # The baseline: page numbers as Django's Paginator does them, same rows and relations.
    def paged(number: int) -> float:
        start = time.perf_counter()
        qs = records.perturbation_records(Perturbation.objects.filter(project=project))
        page = Paginator(qs.order_by("-id"), 50).page(number)
        records.records("perturbations", list(page.object_list))
        return (time.perf_counter() - start) * 1000

    # The baseline of a text search: the rows scanned for it, as before the trigram index.
    def scanned(q: str) -> float:
        from django.db.models import Q

        start = time.perf_counter()
        qs = Perturbation.objects.filter(project=project)
        found = qs.filter(Q(fields__text__icontains=q) | Q(pivot__external_id=q))
        list(found.order_by("-id").values_list("id", flat=True)[:51])
        return (time.perf_counter() - start) * 1000

    q = f"review {args.rows // 3 + 7} was"
    scanned(q)
    ms = statistics.median(scanned(q) for _ in range(5))
    print(f"  baseline, a text search scanned {ms:7.1f} ms (the 1-row search's rows, ids only)")
    for number in (1, args.rows // 100):
        paged(number)
        ms = statistics.median(paged(number) for _ in range(5))
        print(f"  baseline, Paginator page {number:<7,} {ms:7.1f} ms (COUNT + OFFSET, rows only)")
    if args.undo:  # changes the project: the next run seeds it again
        from annotation.data.services.removal import batch_plan, batch_undo
        from annotation.models import ImportBatch

        batch = ImportBatch.objects.get(pk=batch)
        start = time.perf_counter()
        counts = batch_plan(batch).counts
        planned = time.perf_counter() - start
        start = time.perf_counter()
        batch_undo(batch=batch, actor=None)
        print(
            f"  undo of one import: {counts}, counted in {planned:.2f} s, "
            f"undone in {time.perf_counter() - start:.2f} s"
        )
        Project.objects.filter(pk=project.pk).update(slug=f"{project.slug}-undone-{batch.pk}")


if __name__ == "__main__":
    main()
