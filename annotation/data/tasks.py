"""The Data page's Celery task, on the `imports` queue as every annotation task (annotation.tasks
registers it with the worker): an import's rows put in the text-search index after it commits."""

from celery import shared_task
from django.db import transaction

from annotation.data.services.search_index import index_project, refresh_statistics

# Rows one task indexes, one transaction; then the rest goes to the back of the queue, so that
# an import or a run queued meanwhile waits for the task under way, no more: with 50k a task,
# imports sent one after another waited 20-49 s each behind the indexing of those before them
# (load 4-5), 2.2-3.6 s with 5k (quiet; benchmarks/README.md).
TASK_ROWS = 2_000


@shared_task(acks_late=True, reject_on_worker_lost=True)
def index_search_task(project_id: int) -> None:
    """Index the project's rows that are not yet searchable (search_index.index_project), then,
    once none is left, refresh the statistics of their texts. A run cut short leaves the rest
    to the redelivered message or the next sweep."""
    if index_project(project_id, limit=TASK_ROWS) >= TASK_ROWS:
        index_search_task.delay(project_id)
    else:
        refresh_statistics()


def index_later(project_id: int) -> None:
    """Index the project's unsearchable rows on a worker once this transaction commits (after
    an import job's success, which it never delays). A broker that cannot take the message
    fails nothing (robust): the rows are still found, unindexed, until the next sweep."""
    transaction.on_commit(lambda: index_search_task.delay(project_id), robust=True)
