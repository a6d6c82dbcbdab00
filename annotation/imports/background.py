"""Imports too large for a request (over IMPORT_BACKGROUND_BYTES, or over
IMPORT_BACKGROUND_LINES lines) run on a worker: the request stores the files and answers at once
with the job (docs/api.md, "Imports"). Lines count as well as bytes: a 4.8 MB CSV of 235,000
short rows took 20 s in the request, against gunicorn's 30 s timeout."""

import contextlib
import os
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from annotation import jobs
from annotation.errors import DomainError
from annotation.imports.preview import sweep_uploads
from annotation.imports.services.running import import_now
from annotation.imports.tasks import run_import_task
from annotation.models import ImportJob, Project, user_or_none
from annotation.uploads import imports_folder

FILE_FIELDS = ("file", "original", "contrast")


def files_and_options(values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A validated import form's uploads, and the rest of it: the import's options."""
    files = {k: v for k, v in values.items() if k in FILE_FIELDS and v}
    return files, {k: v for k, v in values.items() if k not in FILE_FIELDS}


def import_or_queue(**values: Any) -> tuple[ImportJob | None, dict[str, Any]]:
    """Import in this request, or queue the import when the upload is large: (None, the
    answer) or (the job, {}). Raises ImportRejected, as import_now does."""
    uploads = values["files"].values()
    size = sum(upload.size for upload in uploads)
    if (
        size > settings.IMPORT_BACKGROUND_BYTES
        or _lines(uploads) > settings.IMPORT_BACKGROUND_LINES
    ):
        return import_later(**values), {}
    return None, import_now(**values)


def _lines(uploads: Any) -> int:
    """Lines in the uploads (at most IMPORT_BACKGROUND_BYTES of them, a few milliseconds)."""
    lines = 0
    for upload in uploads:
        lines += sum(chunk.count(b"\n") for chunk in upload.chunks())
        upload.seek(0)
    return lines


def import_later(
    *, project: Project, user: Any, kind: str, files: dict[str, Any], options: dict[str, Any]
) -> ImportJob:
    """Store the uploads, then make the job that names them, and queue it (the worker runs it:
    services.run_import). The files are whole before any job exists: a web worker killed while
    writing them leaves no job that waits for ever, only a folder no job names."""
    sweep_uploads()
    folder = imports_folder() / uuid.uuid4().hex
    folder.mkdir(parents=True, exist_ok=True)
    stored = {}
    for field, upload in files.items():
        path = folder / field
        _store(upload, path)
        relative = str(path.relative_to(settings.MEDIA_ROOT))
        stored[field] = {"path": relative, "name": Path(upload.name).name}
    job = ImportJob.objects.create(
        project=project, kind=kind, options=options, files=stored, created_by=user_or_none(user)
    )
    transaction.on_commit(lambda: run_import_task.delay(job.pk))
    return job


def _store(upload: Any, path: Path) -> None:
    """Write the upload to `path`: a large one is already whole in a temporary file under
    MEDIA_ROOT (FILE_UPLOAD_TEMP_DIR), linked there rather than written a second time; else,
    or where links fail, its bytes are copied."""
    if hasattr(upload, "temporary_file_path"):
        with contextlib.suppress(OSError):
            os.link(upload.temporary_file_path(), path)
            return
    with path.open("wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)


def import_cancel(job: ImportJob) -> ImportJob:
    """Cancel a queued or running import: nothing of it is committed (services.run_import)."""
    if job.finished:
        raise DomainError(f"This import has already {job.status}.", code="conflict")
    return jobs.cancel(job)


def import_retry(job: ImportJob) -> ImportJob:
    """Queue a failed or cancelled import again, from its stored files, with its attempts
    counted afresh."""
    if job.status == ImportJob.Status.SUCCEEDED:
        raise DomainError("This import succeeded; undo it from the Import page.", code="conflict")
    root = Path(settings.MEDIA_ROOT)
    if not all((root / f["path"]).exists() for f in job.files.values()):
        raise DomainError("This import's files are gone; upload the file again.", code="conflict")
    job = jobs.requeue(job, result={}, errors=[])
    transaction.on_commit(lambda: run_import_task.delay(job.pk))
    return job


JOB_ACTIONS = {"cancel": import_cancel, "retry": import_retry}
