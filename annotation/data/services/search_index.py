"""The Data page's text search indexed after an import, not inside it (migration 0024). An
import writes its originals and perturbations unsearchable (`searchable` False), so that its
transaction builds no trigram entries: they cut originals from 13-14k rows/s to 2.7k, sets from
2.9-3.1k to 1.1k (benchmarks/search_index.py). Once it commits (tasks.index_later), a worker
sets them searchable a chunk at a time, which puts them in the trigram index. Until then the
search reads them from their own small index, field by field (selectors._search): it never
misses a row, it is only slower while a large import waits to be indexed.

A worker that dies while indexing leaves the rest unsearchable: its message comes back, and
the sweep a starting worker runs (evaluation.tasks.sweep_stale_jobs) queues every project that
still has such rows."""

from django.db import connection, transaction

from annotation.models import Example, Perturbation

CHUNK = 5000  # rows set searchable in one transaction


def index_project(project_id: int, chunk: int = CHUNK, limit: int | None = None) -> int:
    """Set the project's unsearchable rows searchable, `chunk` rows a transaction, until none
    is left or `limit` rows are done; how many it set. Rows another worker is setting meanwhile
    are left to it (SKIP LOCKED), so that two workers on one project share the rows instead of
    waiting on each other."""
    done = 0
    for model in (Example, Perturbation):
        while limit is None or done < limit:
            with transaction.atomic():
                waiting = model.objects.filter(project_id=project_id, searchable=False)
                waiting = waiting.order_by("id").select_for_update(skip_locked=True)
                size = chunk if limit is None else min(chunk, limit - done)
                chosen = list(waiting.values_list("pk", flat=True)[:size])
                if not chosen:
                    break
                done += model.objects.filter(pk__in=chosen).update(searchable=True)
    return done


def refresh_statistics() -> None:
    """The planner's statistics of originals and perturbations, their texts' included, once an
    import is indexed. The import's own ANALYZE leaves out the JSON columns, and with them the
    statistics of the text the search looks in (bulk.analyze); until autovacuum's ANALYZE,
    which 2% more rows do not start, a text common in the import was taken for a rare one
    and its page read all the import's rows (0.43 s at 1M, 0.02 s after). It samples a fixed
    number of rows: 0.8 s at 1M, on the worker, after the job's success."""
    if connection.vendor != "postgresql":
        return
    tables = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in (Example, Perturbation))
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {tables}")


def projects_waiting() -> list[int]:
    """The projects that have rows not yet indexed (the partial indexes hold only those)."""
    found: set[int] = set()
    for model in (Example, Perturbation):
        rows = model.objects.filter(searchable=False).order_by()
        found.update(rows.values_list("project_id", flat=True).distinct())
    return sorted(found)
