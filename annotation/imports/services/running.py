"""Running an import of any kind, in the request or on a worker (annotation.imports.background
queues the large ones): each kind's import function, and the API's answer it gives. Here is
every import's end: import_now's (a request, a command) and run_import's (a worker) announce
it once, succeeded or failed (webhooks/events.py, `import.finished`, and its notification)."""

import contextlib
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files import File
from django.db import transaction

from annotation import jobs
from annotation.errors import DomainError, ImportRejected
from annotation.imports.published.services import import_published
from annotation.imports.services.originals import import_examples
from annotation.imports.services.sets import run_set_import
from annotation.imports.services.votes import import_votes
from annotation.models import ImportJob, Project
from annotation.webhooks import events
from annotation.webhooks.events import ImportFinished

Kind = ImportJob.Kind
Status = ImportJob.Status


def import_now(
    *,
    project: Project | None,
    user: Any,
    kind: str,
    files: dict[str, Any],
    options: dict[str, Any],
) -> dict[str, Any]:
    """Import `files` (form field -> a file with .read() and .name) with `options`, in this
    process (a request, a management command); returns the API's answer. Raises
    ImportRejected, and imports nothing, on any error. Either way the import is announced once
    it commits; a failed one too, unless it failed to make its project (a published dataset's
    import with `project` None, into a new project, `options` naming its slug and name)."""
    try:
        answer = _import(project=project, user=user, kind=kind, files=files, options=options)
    except Exception as error:
        if project is not None:
            said = _failure(error, _message(error))["error"]
            _announce(ImportFinished(project, kind, Status.FAILED, said, _user_id(user)))
        raise
    project = project or Project.objects.get(slug=answer["project"])
    batch = answer.get("batch")
    _announce(ImportFinished(project, kind, Status.SUCCEEDED, "", _user_id(user), batch=batch))
    return answer


def _announce(finished: ImportFinished) -> None:
    transaction.on_commit(lambda: events.import_finished(finished), robust=True)


def _message(error: Exception) -> str:
    """A failure's message, as a job stores it (annotation.jobs.execute)."""
    if isinstance(error, DomainError):
        return error.message
    return f"{error.__class__.__name__}: {error}"


def _user_id(user: Any) -> int | None:
    return user.pk if user is not None and user.is_authenticated else None


def _import(
    *,
    project: Project | None,
    user: Any,
    kind: str,
    files: dict[str, Any],
    options: dict[str, Any],
) -> dict[str, Any]:
    """The import itself, unannounced (its callers announce it)."""
    if kind == Kind.PUBLISHED:  # file1 to file4, in the dataset's order
        ordered = [(files[field].name, files[field].read()) for field in sorted(files)]
        return import_published(files=ordered, user=user, project=project, **options).as_dict()
    if project is None:
        raise DomainError("Only a published dataset's import makes its project.")
    if kind == Kind.VOTES:
        upload = files["file"]
        return import_votes(project=project, user=user, data=upload.read(), source_name=upload.name)
    if kind == Kind.ORIGINALS:
        upload = files["file"]
        batch = import_examples(
            project=project, user=user, data=upload.read(), source_name=upload.name, **options
        )
        return {"batch": batch.pk, "imported": batch.row_count, "skipped": len(batch.skipped)}
    result = run_set_import(project, user, {**options, **files})
    return {
        "perturbations": result.created,
        "already_present": result.skipped,
        "warnings": [w.as_dict() for w in result.warnings],
        "warning_count": result.warning_count,
        "batch": result.batch,
    }


def run_import(job_id: int) -> ImportJob | None:
    """Run a queued import on a worker; None if it already finished. Every job's driver runs
    it (annotation.jobs.execute): claimed, a heartbeat while it runs, taken over by the next
    worker if this one dies, and failed with the reason on any error. The import and its
    success commit together (`whole`), so that a worker killed in between leaves it to run
    again whole; a job cancelled meanwhile commits nothing. Its files stay until it succeeds,
    for a retry."""
    job = jobs.execute(ImportJob, job_id, _import_stored, whole=True, failure=_failure)
    if job is None:
        return None
    if job.status == Status.SUCCEEDED:
        remove_files(job)
    _announce(ImportFinished.of_job(job))
    return job


def _import_stored(job: ImportJob) -> dict[str, Any]:
    root = Path(settings.MEDIA_ROOT)
    with contextlib.ExitStack() as stack:
        files = {
            field: File(stack.enter_context((root / f["path"]).open("rb")), name=f["name"])
            for field, f in job.files.items()
        }
        result = _import(
            project=job.project,
            user=job.created_by,
            kind=job.kind,
            files=files,
            options=job.options,
        )
    return {"result": result}


def _failure(error: Exception, message: str) -> dict[str, Any]:
    """What a failed import stores: each rejected line's problem, the rule that refused the
    whole file (line null), or, when the file is not at fault (its stored copy gone, an
    error of ours), the reason alone."""
    if isinstance(error, ImportRejected):
        return {"error": "The file was rejected.", "errors": [e.as_dict() for e in error.errors]}
    if isinstance(error, DomainError):
        return {"error": error.message, "errors": [{"line": None, "message": error.message}]}
    return {"error": message, "errors": []}


def remove_files(job: ImportJob) -> None:
    root = Path(settings.MEDIA_ROOT)
    for f in job.files.values():
        (root / f["path"]).unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # the job's folder, once empty
            (root / f["path"]).parent.rmdir()
