"""The Data page's text-search index taken out of the imports (migration 0024,
annotation.data.services.search_index): what it costs an import, how long after its success its rows
are searchable, and the search while they are not.

--imports: real IMDb reviews (../shared/data, repeated and numbered, as
benchmarks/originals_import.py builds them) imported in this process (import_now, as the worker
runs it), alternating in one run and one new database: `new`, the rows written unsearchable
(the code of 0024); `old`, the same import with its rows written searchable, so that its
transaction builds the trigram entries as before 0024; then `none`, after the trigram indexes
are dropped. Each `new` import is then indexed as the worker does it (index_project), timed:
the time from the import's success until its rows are searchable (the worker's queue wait
aside). CPU seconds are this process's and its PostgreSQL backend's (/proc), beside the load.

--search: on the 1M-row database of benchmarks/data_page.py (same BENCH_DB; seed it first with
`data_page.py --rows 1000000`), 20k sets of real reviews (20k originals and 20k perturbations)
imported into that project and not yet indexed: the Data page's text searches (median of 5
in-process requests), the plan of one, then the same after the worker indexed them; the import
is undone at the end (its unindexed rows' undo is timed before indexing in a second pass),
or kept with --keep (before f78bbb0 that undo ran over 14 min at 1M: removal.batch_plan); a
later run's import then adds nothing (its originals are there) and measures the kept rows.
After the indexing, the statistics are refreshed as the worker's task does it.

    BENCH_DB=h1_bench .venv/bin/python benchmarks/search_index.py --imports [--runs 2]
        [--sizes 20000] [--lag 20000 200000]
    BENCH_DB=h1_data .venv/bin/python benchmarks/search_index.py --search [--keep]
"""

import argparse
import io
import os
import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any
from unittest import mock

from data_page import median_ms
from job_drill import imdb_jsonl
from originals_import import pairs, sets_jsonl
from seed import bench_database

TICK = os.sysconf("SC_CLK_TCK")
# A set import's options as the API stores them (accepted, as benchmarks/originals_import.py)
SETS = {"format": "sets_jsonl", "accept": True, "author": "imported", "mapping": {},
        "labels": {}, "split": "test", "strict": False, "tags": []}  # fmt: skip


def backend_cpu() -> float:
    """CPU seconds of this connection's PostgreSQL backend (a local server)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def measured(work: Callable[[], Any]) -> tuple[float, float, float]:
    """(wall, process CPU, backend CPU) seconds of `work()`."""
    wall, cpu, backend = time.perf_counter(), time.process_time(), backend_cpu()
    work()
    return (
        time.perf_counter() - wall,
        time.process_time() - cpu,
        backend_cpu() - backend,
    )


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


@contextmanager
def written_searchable() -> Any:
    """The imports as before 0024: their rows written searchable, so indexed in the import."""
    from annotation.imports import set_rows
    from annotation.imports.services import originals
    from annotation.models import Example, Perturbation

    real = set_rows.insert_rows

    def insert(model: Any, rows: Any, **options: Any) -> Any:
        if model in (Example, Perturbation):
            rows = ({**row, "searchable": True} for row in rows)
        return real(model, rows, **options)

    with (
        mock.patch.object(set_rows, "insert_rows", insert),
        mock.patch.object(originals, "insert_rows", insert),
    ):
        yield


def import_into(slug: str, kind: str, content: bytes, mode: str) -> Any:
    from django.core.files import File

    from annotation.imports.services.running import import_now
    from annotation.projects import services

    project = services.project_create(
        user=None, name=slug, slug=slug, fields=[{"name": "text"}],
        labels=["positive", "negative"], tags=[{"name": "imdb"}],
    )  # fmt: skip
    options = {"fmt": "jsonl"} if kind == "originals" else SETS
    upload = File(io.BytesIO(content), name="imdb.jsonl")

    def run() -> None:
        import_now(project=project, user=None, kind=kind, files={"file": upload}, options=options)

    if mode == "old":
        with written_searchable():
            return project, measured(run)
    return project, measured(run)


def rows_of(kind: str, n: int) -> int:
    return n if kind == "originals" else 2 * n  # a set: an original and its perturbation


def report(what: str, rows: int, figures: tuple[float, float, float]) -> None:
    wall, cpu, backend = figures
    print(f"  {what}: {wall:6.2f} s, {rows / wall:8,.0f} rows/s; CPU {cpu:5.2f} s + backend "
          f"{backend:5.2f} s; {load()}", flush=True)  # fmt: skip


def imports(kinds: list[str], sizes: list[int], lag: list[int], runs: int) -> None:
    from annotation.data.services.search_index import index_project

    found = pairs()
    files = {"originals": imdb_jsonl, "sets": lambda n: sets_jsonl(n, found)}
    print(f"imports, in-process, {load()} (2 cores)")
    for n in sizes:
        for kind in kinds:
            content = files[kind](n)
            for run in range(1, runs + 1):
                for mode in ("new", "old"):
                    project, figures = import_into(f"{kind}-{n}-{run}-{mode}", kind, content, mode)
                    report(f"{kind} {n} run {run}, {mode:>3}", rows_of(kind, n), figures)
                    if mode == "new":
                        indexed = measured(lambda: index_project(project.pk))  # noqa: B023
                        report(f"    then indexed ({mode})", rows_of(kind, n), indexed)
    for n in lag:
        content = imdb_jsonl(n)
        project, figures = import_into(f"lag-{n}", "originals", content, "new")
        report(f"originals {n}, new", n, figures)
        indexed = measured(lambda: index_project(project.pk))  # noqa: B023
        report("    until searchable (index_project)", n, indexed)
    drop_trigrams()
    print("-- the trigram indexes and their statistics dropped")
    for n in sizes:
        for kind in kinds:
            content = files[kind](n)
            for run in range(1, runs + 1):
                _, figures = import_into(f"{kind}-{n}-{run}-none", kind, content, "new")
                report(f"{kind} {n} run {run}, none", rows_of(kind, n), figures)


def drop_trigrams() -> None:
    """The database as before migration 0023: no trigram index, nor its expression's
    statistics (which each import's ANALYZE computes)."""
    from django.db import connection

    with connection.cursor() as cursor:
        for table in ("annotation_example", "annotation_perturbation"):
            cursor.execute(f"DROP INDEX IF EXISTS {table}_fields_trgm")
            cursor.execute(f"DROP STATISTICS IF EXISTS {table}_fields_text")


def search(keep: bool) -> None:
    from django.contrib.auth.models import User
    from django.core.files import File
    from django.db import connection
    from django.test import Client

    from annotation.data import selectors
    from annotation.data.services.removal import batch_undo
    from annotation.data.services.search_index import index_project, refresh_statistics
    from annotation.imports.services.running import import_now
    from annotation.models import Example, ImportBatch, Perturbation, Project, Tag

    project = Project.objects.get(slug="data-1000000")
    Tag.objects.get_or_create(project=project, name="imdb")
    found = pairs()
    rows = Perturbation.objects.filter(project=project).count()
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(User.objects.get(username="bench-admin"))
    base = f"/p/{project.slug}/data/?"
    rare_imported = " ".join(found[123][1]["Text"].split()[3:7])  # 4 words of one perturbation
    rare_original = " ".join(found[123][0]["Text"].split()[3:7])
    cases = {
        "a text, 1 row (seeded)": f"q=review {rows // 3 + 7} was",
        "a text, every row": "q=WAS BAD",
        # in a tenth of the seeded rows, none imported: taken for rare, read from the index
        "a text, 10% of the seeded rows": "q=0 was bad",
        "a text of the import": f"q={rare_imported}",
        "originals, a text, 1 row": f"kind=originals&q=review {rows // 3 + 7} was",
        "originals, a text of the import": f"kind=originals&q={rare_original}",
        "an id": "q=ex-777",
        "common in the import (the)": "q=the",
        "common everywhere (was)": "q=was",
        "originals, every seeded row": "kind=originals&q=was good",
        "originals, 10% of the seeded rows": "kind=originals&q=0 was good",
    }

    def pages(state: str) -> None:
        print(f"Data page, {rows:,} perturbations + 20k imported, {state}; {load()}:")
        for name, query in cases.items():
            print(f"  {name:<34} {median_ms(client, base + query)[0]:7.1f} ms", flush=True)

    def plan(q: str) -> None:
        qs = selectors.rows(project, selectors.Filters(q=q))[:51]
        sql, params = qs.query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {sql}", params)
            print("\n".join("    " + line for (line,) in cursor.fetchall()))

    for undo_first in (False,) if keep else (False, True):
        content = sets_jsonl(20_000, found)
        upload = File(io.BytesIO(content), name="imdb.jsonl")
        answer = import_now(
            project=project, user=None, kind="sets", files={"file": upload}, options=SETS
        )
        batch = ImportBatch.objects.get(pk=answer["batch"])
        waiting = Example.objects.filter(project=project, searchable=False).count()
        waiting += Perturbation.objects.filter(project=project, searchable=False).count()
        print(f"imported 20k sets: {waiting:,} rows not yet searchable")
        if undo_first:
            wall = measured(lambda: batch_undo(batch=batch, actor=None))[0]  # noqa: B023
            print(f"  undo of the unindexed import: {wall:.2f} s; {load()}")
            continue
        pages("not yet indexed")
        plan(rare_imported)
        indexed = measured(lambda: index_project(project.pk))
        report("indexed by the worker's step (index_project)", waiting, indexed)
        wall = measured(refresh_statistics)[0]
        print(f"  then the worker's ANALYZE (refresh_statistics): {wall:.2f} s; {load()}")
        pages("all indexed")
        plan(rare_imported)
        if not keep:
            wall = measured(lambda: batch_undo(batch=batch, actor=None))[0]  # noqa: B023
            print(f"  undo of the indexed import: {wall:.2f} s; {load()}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--imports", action="store_true")
    parser.add_argument("--search", action="store_true")
    parser.add_argument("--keep", action="store_true", help="--search keeps its import")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000])
    parser.add_argument("--lag", type=int, nargs="+", default=[20_000, 200_000])
    parser.add_argument("--kinds", nargs="+", default=["originals", "sets"])
    args = parser.parse_args()
    os.environ["IMPORT_MAX_BYTES"] = str(512 * 1024 * 1024)  # 200k reviews are 195 MB
    bench_database(fresh=args.imports)
    with mock.patch("annotation.data.tasks.index_search_task.delay"):  # the benchmark indexes
        if args.imports:
            imports(args.kinds, args.sizes, args.lag, args.runs)
        if args.search:
            search(args.keep)


if __name__ == "__main__":
    main()
