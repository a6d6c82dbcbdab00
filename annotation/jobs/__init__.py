"""The life of every worker job (an import, an evaluation run, an analysis): claim, heartbeat
and progress, finish; cancel and retry from the web process (their page action: pages.py).

Their models share the lifecycle fields (annotation.models.Job). A job whose worker died keeps
its message unacknowledged; the redelivery, or the sweep a starting worker runs
(evaluation.tasks.sweep_stale_jobs), takes the job over once its heartbeat is older than
EVALUATION_STALE_SECONDS, and waits (RunBusy) while a live worker still runs it. A job whose
worker died JOB_MAX_ATTEMPTS times (killed for memory, say) fails with the reason instead of
running forever.
"""

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, connections, transaction
from django.utils import timezone

from annotation.errors import DomainError
from annotation.models import Job

Status = Job.Status
logger = logging.getLogger(__name__)


class Cancelled(Exception):
    pass


class RunBusy(Exception):
    """Another live worker is running this job (a redelivered message); try later."""


def execute(
    model: Any,
    pk: int,
    work: Callable[[Any], dict[str, Any]],
    expected: tuple[type[Exception], ...] = (),
    *,
    whole: bool = False,
    failure: Callable[[Exception, str], dict[str, Any]] | None = None,
) -> Any:
    """The one driver of every job (an import, a run, a shard, an analysis): claim the job,
    run `work(job)` and store the fields it returns with `succeeded`. Errors the admin can fix
    (`expected`, DomainError, OSError, KeyError) are stored as `failed` with their message;
    any other as `failed` too, with its class, and logged: no job is left `running`. None if
    already finished.

    `whole`: the work and its success commit in one transaction (an import), so that a worker
    killed in between leaves the job to run again whole, and a job cancelled meanwhile commits
    nothing. `failure(error, message)` gives the fields a failure stores (`error` by default)."""
    job = claim(model, pk)
    if job is None:
        return None
    try:
        if whole:
            _commit_whole(job, work)
        else:
            finish(job, Status.SUCCEEDED, **work(job))
    except Cancelled:
        pass
    except (OperationalError, InterfaceError):
        raise  # the database went away (a restart): the task runs the job again later
    except (DomainError, OSError, KeyError, *expected) as error:  # type: ignore[misc]
        _failed(job, error, str(error) or error.__class__.__name__, failure)
    except Exception as error:  # a model's own code failed: keep the message, mark failed
        logger.exception("%s %s failed", model.__name__, pk)
        _failed(job, error, f"{error.__class__.__name__}: {error}", failure)
    job.refresh_from_db()
    return job


def _commit_whole(job: Any, work: Callable[[Any], dict[str, Any]]) -> None:
    """`work(job)` and its success in one transaction, the heartbeat kept from a thread."""
    with transaction.atomic():
        with beating(job):
            values = work(job)
        # The job's row locked: a cancel waits for this commit, or came first and wins.
        if not type(job).objects.select_for_update().filter(pk=job.pk, status=Status.RUNNING):
            raise Cancelled
        finish(job, Status.SUCCEEDED, **values)


def _failed(job: Any, error: Exception, message: str, failure: Any) -> None:
    fields = failure(error, message) if failure else {"error": message}
    finish(job, Status.FAILED, **fields)


def run_or_retry(task: Any, work: Callable[[int], Any], pk: int) -> Any:
    """`work(pk)` in a bound Celery task, the one retry rule of every job's task: retried after
    EVALUATION_STALE_SECONDS when the database went away (a restart: its connections are
    dropped, and by then the job's heartbeat is stale, so the retry takes it over), or while
    another live worker runs the job (RunBusy). Nothing else is retried: the job records it."""
    try:
        return work(pk)
    except (OperationalError, InterfaceError) as lost:
        connections.close_all()
        raise task.retry(exc=lost, countdown=settings.EVALUATION_STALE_SECONDS) from None
    except RunBusy as busy:
        raise task.retry(exc=busy, countdown=settings.EVALUATION_STALE_SECONDS) from None


def _stale_before() -> Any:
    """A running job whose last heartbeat is older than this lost its worker."""
    return timezone.now() - timedelta(seconds=settings.EVALUATION_STALE_SECONDS)


def is_stale(job: Any) -> bool:
    alive = job.heartbeat_at is not None and job.heartbeat_at >= _stale_before()
    return job.status == Status.RUNNING and not alive


def stale_ids(model: Any) -> list[int]:
    running = model.objects.filter(status=Status.RUNNING, heartbeat_at__lt=_stale_before())
    return list(running.values_list("pk", flat=True))


def claim(model: Any, pk: int) -> Any:
    """The job, now running here; None if it is finished (or failed here: its worker died too
    often). Raises RunBusy while another live worker runs it."""
    with transaction.atomic():
        job = model.objects.select_for_update().get(pk=pk)
        if job.finished:
            return None
        now = timezone.now()
        if job.status == Status.RUNNING and not is_stale(job):
            raise RunBusy(f"{model.__name__} {pk} is running on another worker.")
        if job.attempts >= settings.JOB_MAX_ATTEMPTS:
            said = (
                f"Its worker stopped {job.attempts} times before it finished (killed, or out "
                "of memory); retry it, or make it smaller."
            )
            finish(job, Status.FAILED, error=said)
            return None
        job.status, job.started_at, job.heartbeat_at = Status.RUNNING, now, now
        job.attempts += 1
        job.done = 0
        job.save(update_fields=["status", "started_at", "heartbeat_at", "attempts", "done"])
        return job


def heartbeat(job: Any, **values: Any) -> None:
    """Record progress (and that the worker lives); raises Cancelled once the job is cancelled."""
    updated = (
        type(job)
        .objects.filter(pk=job.pk, status=Status.RUNNING)
        .update(heartbeat_at=timezone.now(), **values)
    )
    if not updated:
        raise Cancelled


@contextmanager
def holding(job: Any) -> Iterator[Any]:
    """A transaction that writes only while this attempt still holds `job`: its row locked,
    running, and not taken over (the same attempt), given as a queryset to update. A job
    cancelled or taken over meanwhile raises Cancelled, and nothing is written."""
    with transaction.atomic():
        held = (
            type(job)
            .objects.select_for_update()
            .filter(pk=job.pk, status=Status.RUNNING, attempts=job.attempts)
        )
        if not held:
            raise Cancelled
        yield held


def finish(job: Any, status: str, *, error: str = "", **values: Any) -> None:
    now = timezone.now()
    type(job).objects.filter(pk=job.pk).exclude(status=Status.CANCELLED).update(
        status=status, error=error[:5000], finished_at=now, heartbeat_at=now, **values
    )


def cancel(job: Any) -> Any:
    type(job).objects.filter(pk=job.pk, status__in=[Status.QUEUED, Status.RUNNING]).update(
        status=Status.CANCELLED, finished_at=timezone.now()
    )
    job.refresh_from_db()
    return job


def requeue(job: Any, **cleared: Any) -> Any:
    """Queue a finished job again, or one whose worker died (a stale heartbeat), which the new
    run takes over; also clearing `cleared`. A retry is a new start: its attempts count from
    zero, or a job the cap failed would fail again without running. Results are not cleared
    here: a job keeps its last success's until a new attempt succeeds and replaces them."""
    if not job.finished and not is_stale(job):
        raise DomainError("Only a finished job can run again.", code="conflict")
    type(job).objects.filter(pk=job.pk).update(
        status=Status.QUEUED,
        done=0,
        error="",
        started_at=None,
        finished_at=None,
        heartbeat_at=None,
        attempts=0,
        **cleared,
    )
    job.refresh_from_db()
    return job


@contextmanager
def beating(job: Any) -> Iterator[None]:
    """Keep the job's heartbeat fresh from a thread of its own (with its own database
    connection) while the caller does one long step, such as an import in one transaction."""
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(settings.EVALUATION_STALE_SECONDS / 3):
                type(job).objects.filter(pk=job.pk, status=Status.RUNNING).update(
                    heartbeat_at=timezone.now()
                )
        finally:
            connection.close()

    thread = threading.Thread(target=beat, name=f"heartbeat-{job.pk}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
