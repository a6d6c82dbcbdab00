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
from evaluation.models import EvaluationRun, ModelSpec, RunShard
from evaluation.runs.kinds import kind_of
from evaluation.runs.predictions import PredictionsFile, read_predictions
from evaluation.runs.shards import MAX_SHARDS
from evaluation.runs.tasks import run_evaluation_task, run_shard_task


def evaluation_enqueue(
    *,
    release: Release,
    model: ModelSpec,
    split: str,
    user: Any,
    send: bool = True,
    shards: int = 1,
    reuse_answers: bool = True,
) -> EvaluationRun:
    """Create a queued run and, once the transaction commits, send it to the worker queue
    (unless `send` is false: `manage.py evaluate --sync` runs it in its own process); a run
    of several `shards` sends each shard instead (evaluation/runs/shards.py)."""
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
    _check_shards(release, model, split, shards, send)
    run = EvaluationRun.objects.create(
        release=release,
        model=model,
        split=split,
        created_by=user_or_none(user),
        shards=shards,
        reuse_answers=reuse_answers,
    )
    if shards > 1:
        RunShard.objects.bulk_create([RunShard(run=run, index=i) for i in range(shards)])
    if send:
        _send(run)
    return run


def _check_shards(release: Release, model: ModelSpec, split: str, shards: int, send: bool) -> None:
    if shards == 1:
        return
    if not 1 <= shards <= MAX_SHARDS:
        raise DomainError(f"shards must be from 1 to {MAX_SHARDS}.", field="shards")
    if not kind_of(model).shardable or not send:
        raise DomainError(
            f"A {model.kind} model runs in one piece: leave shards at 1.", field="shards"
        )
    sets = release.counts.get("sets", {}).get(split, 0)
    if shards > sets:
        raise DomainError(
            f"The {split} split has {sets} contrast sets: at most that many shards.",
            field="shards",
        )


def _send(run: EvaluationRun) -> None:
    if run.shards == 1:
        transaction.on_commit(lambda: run_evaluation_task.delay(run.pk))
        return
    ids = list(run.shard_jobs.values_list("pk", flat=True))
    transaction.on_commit(lambda: [run_shard_task.delay(pk) for pk in ids])


def evaluation_retry(*, run: EvaluationRun) -> EvaluationRun:
    """Run again from scratch, its attempts counted afresh; the metrics and predictions of its
    last success stay until the new ones replace them (evaluation.runs.execute)."""
    jobs.requeue(run, examples_per_second=None)
    if run.shards > 1:  # the shards that did not succeed; every shard after a success
        shards = list(run.shard_jobs.all())
        again = [s for s in shards if s.status != RunShard.Status.SUCCEEDED] or shards
        for shard in again:
            jobs.requeue(shard)
        ids = [shard.pk for shard in again]
        transaction.on_commit(lambda: [run_shard_task.delay(pk) for pk in ids])
        return run
    _send(run)
    return run


def evaluation_cancel(*, run: EvaluationRun) -> EvaluationRun:
    for shard in run.shard_jobs.all():
        jobs.cancel(shard)
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
                project=project,
                name=f"{base} ({taken + 1})" if taken else base,
                kind=PredictionsFile.name,
                source=str(relative),
                created_by=user_or_none(user),
                trusted=user is None or bool(getattr(user, "is_staff", False)),
            )
            return evaluation_enqueue(release=release, model=spec, split=split, user=user)
    except BaseException:  # no run was made: no file is left without one
        path.unlink(missing_ok=True)
        raise
