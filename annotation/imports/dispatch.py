"""Running an import of any kind, in the request or on a worker (annotation.imports.background
queues the large ones): each kind's import function, and the API's answer it gives."""

import contextlib
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files import File
from django.db import transaction

from annotation import jobs
from annotation.errors import DomainError, ImportRejected
from annotation.imports.originals import import_examples
from annotation.imports.published.services import import_published
from annotation.imports.sets import run_set_import
from annotation.imports.votes import import_votes
from annotation.models import ImportJob, Project

Kind = ImportJob.Kind
Status = ImportJob.Status


def import_now(
    *, project: Project, user: Any, kind: str, files: dict[str, Any], options: dict[str, Any]
) -> dict[str, Any]:
    """Import `files` (form field -> a file with .read() and .name) with `options`, in this
    process; returns the API's answer. Raises ImportRejected, and imports nothing, on any error."""
    if kind == Kind.VOTES:
        upload = files["file"]
        return import_votes(project=project, user=user, data=upload.read(), source_name=upload.name)
    if kind == Kind.PUBLISHED:  # file1 to file4, in the dataset's order
        ordered = [(files[field].name, files[field].read()) for field in sorted(files)]
        return import_published(dataset=options["dataset"], files=ordered, user=user,
                                project=project, accept=options["accept"]).as_dict()  # fmt: skip
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
    """Run a queued import on a worker; None if it already finished. Its lifecycle is every
    job's (annotation.jobs): claimed, a heartbeat while it runs, taken over by the next worker
    if this one dies. The import and its success commit together, so that a worker killed in
    between leaves it to run again whole; a job cancelled meanwhile commits nothing. Its files
    stay until it succeeds, for a retry."""
    job = jobs.claim(ImportJob, job_id)
    if job is None:
        return None
    root = Path(settings.MEDIA_ROOT)
    handles = {field: (root / f["path"]).open("rb") for field, f in job.files.items()}
    files = {
        field: File(handle, name=job.files[field]["name"]) for field, handle in handles.items()
    }
    try:
        with transaction.atomic():
            with jobs.beating(job):
                result = import_now(
                    project=job.project, user=job.created_by, kind=job.kind, files=files,
                    options=job.options,
                )  # fmt: skip
            # The job's row locked: a cancel waits for this commit, or came first and wins.
            if not ImportJob.objects.select_for_update().filter(pk=job.pk, status=Status.RUNNING):
                raise jobs.Cancelled
            jobs.finish(job, Status.SUCCEEDED, result=result)
    except jobs.Cancelled:
        pass  # rolled back whole
    except ImportRejected as rejected:
        errors = [error.as_dict() for error in rejected.errors]
        jobs.finish(job, Status.FAILED, error="The file was rejected.", errors=errors)
    except DomainError as error:
        errors = [{"line": None, "message": error.message}]
        jobs.finish(job, Status.FAILED, error=error.message, errors=errors)
    finally:
        for handle in handles.values():
            handle.close()
    job.refresh_from_db()
    if job.status == Status.SUCCEEDED:
        remove_files(job)
    return job


def remove_files(job: ImportJob) -> None:
    root = Path(settings.MEDIA_ROOT)
    for f in job.files.values():
        (root / f["path"]).unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # the job's folder, once empty
            (root / f["path"]).parent.rmdir()
