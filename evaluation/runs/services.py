"""Evaluation runs from the web process: enqueue, retry and cancel. A worker scores them with
evaluation.runs.execute."""

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from annotation import jobs
from annotation.errors import DomainError
from annotation.models import Project, Release, user_or_none
from annotation.releases.bundle import read_examples
from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runs.predictions import read_predictions
from evaluation.tasks import run_evaluation_task


def evaluation_enqueue(
    *, release: Release, model: ModelSpec, split: str, user: Any, send: bool = True
) -> EvaluationRun:
    """Create a queued run and, once the transaction commits, send it to the worker queue
    (unless `send` is false: `manage.py evaluate --sync` runs it in its own process)."""
    if model.project_id != release.project_id:
        raise DomainError("The model and the release belong to different projects.")
    if split not in release.counts.get("sets", {}):
        raise DomainError(f"Release {release.version} has no {split} split.")
    if model.few_shot and model.few_shot_split == split:
        raise DomainError(
            f"Model {model.name} draws its shots from {split}; score another split, or register "
            "the model with shots from another split."
        )
    if model.few_shot and model.few_shot_split not in release.counts.get("sets", {}):
        raise DomainError(
            f"Model {model.name} draws shots from {model.few_shot_split}, which release "
            f"{release.version} does not have."
        )
    run = EvaluationRun.objects.create(
        release=release, model=model, split=split, created_by=user_or_none(user)
    )
    if send:
        _send(run)
    return run


def _send(run: EvaluationRun) -> None:
    transaction.on_commit(lambda: run_evaluation_task.delay(run.pk))


def evaluation_retry(*, run: EvaluationRun) -> EvaluationRun:
    """Run again from scratch, its attempts counted afresh; the metrics and predictions of its
    last success stay until the new ones replace them (evaluation.runs.execute)."""
    jobs.requeue(run, examples_per_second=None)
    _send(run)
    return run


def evaluation_cancel(*, run: EvaluationRun) -> EvaluationRun:
    return jobs.cancel(run)


# What a page or the API may do to a run, by name (evaluation.runs.views.job_action).
ACTIONS: dict[str, Callable[[EvaluationRun], EvaluationRun]] = {
    "cancel": lambda run: evaluation_cancel(run=run),
    "retry": lambda run: evaluation_retry(run=run),
}


def predictions_enqueue(*, release: Release, split: str, upload: Any, user: Any) -> EvaluationRun:
    """Check the file against the split now (bad lines refuse it), keep it, and queue its run."""
    project = release.project
    if project.task_type == Project.TaskType.MINIMAL_PAIR:
        raise DomainError("Minimal pairs are scored by language models, not predictions files.")
    if split not in release.counts.get("sets", {}):
        raise DomainError(f"Release {release.version} has no {split} split.", field="split")
    data = upload.read()
    read_predictions(project, read_examples(release, split), data)
    name = Path(upload.name).name[:80] or "predictions"
    relative = Path("predictions") / f"{uuid.uuid4().hex}.json"
    path = Path(settings.MEDIA_ROOT) / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)  # before the run exists: its worker may start at the commit
    try:
        with transaction.atomic():
            # The same file name again (a corrected file, say) is another run: "… (2)".
            base = f"predictions: {name}"
            taken = ModelSpec.objects.filter(project=project, name__startswith=base).count()
            spec = ModelSpec.objects.create(
                project=project, name=f"{base} ({taken + 1})" if taken else base,
                kind=ModelSpec.Kind.PREDICTIONS, source=str(relative),
                created_by=user_or_none(user),
            )  # fmt: skip
            return evaluation_enqueue(release=release, model=spec, split=split, user=user)
    except BaseException:  # no run was made: no file is left without one
        path.unlink(missing_ok=True)
        raise
