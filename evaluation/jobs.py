"""The life of a worker job (an evaluation run or an analysis): claim, heartbeat and progress,
finish; cancel and retry from the web process.

Both models have the same lifecycle fields (status, done, total, error, attempts, started_at,
finished_at, heartbeat_at). A job whose worker died keeps its message unacknowledged; the
redelivery takes the job over once its heartbeat is older than EVALUATION_STALE_SECONDS, and
waits (RunBusy) while a live worker still runs it.
"""

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from annotation.errors import DomainError
from evaluation.models import EvaluationRun
from evaluation.runners.base import RunnerError

Status = EvaluationRun.Status
logger = logging.getLogger(__name__)


class Cancelled(Exception):
    pass


class RunBusy(Exception):
    """Another live worker is running this job (a redelivered message); try later."""


def execute(model: Any, pk: int, work: Callable[[Any], dict[str, Any]]) -> Any:
    """Claim the job, run `work(job)` and store the fields it returns with `succeeded`. Errors
    the admin can fix are stored as `failed` with their message. None if already finished."""
    job = _claim(model, pk)
    if job is None:
        return None
    try:
        values = work(job)
    except Cancelled:
        pass
    except (OperationalError, InterfaceError):
        raise  # the database went away (a restart): the task runs the job again later
    except (RunnerError, DomainError, OSError, KeyError) as error:
        finish(job, Status.FAILED, error=str(error) or error.__class__.__name__)
    except Exception as error:  # a model's own code failed: keep the message, mark failed
        logger.exception("%s %s failed", model.__name__, pk)
        finish(job, Status.FAILED, error=f"{error.__class__.__name__}: {error}")
    else:
        finish(job, Status.SUCCEEDED, **values)
    job.refresh_from_db()
    return job


def _stale_before() -> Any:
    """A running job whose last heartbeat is older than this lost its worker."""
    return timezone.now() - timedelta(seconds=settings.EVALUATION_STALE_SECONDS)


def is_stale(job: Any) -> bool:
    alive = job.heartbeat_at is not None and job.heartbeat_at >= _stale_before()
    return job.status == Status.RUNNING and not alive


def stale_ids(model: Any) -> list[int]:
    running = model.objects.filter(status=Status.RUNNING, heartbeat_at__lt=_stale_before())
    return list(running.values_list("pk", flat=True))


def _claim(model: Any, pk: int) -> Any:
    with transaction.atomic():
        job = model.objects.select_for_update().get(pk=pk)
        if job.finished:
            return None
        now = timezone.now()
        if job.status == Status.RUNNING and not is_stale(job):
            raise RunBusy(f"{model.__name__} {pk} is running on another worker.")
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
    """Queue a finished job again from scratch, clearing `cleared` (its results); or one whose
    worker died (a stale heartbeat), which the new run takes over."""
    if not job.finished and not is_stale(job):
        raise DomainError("Only a finished job can run again.", code="conflict")
    type(job).objects.filter(pk=job.pk).update(
        status=Status.QUEUED, done=0, error="", started_at=None, finished_at=None,
        heartbeat_at=None, **cleared,
    )  # fmt: skip
    job.refresh_from_db()
    return job
