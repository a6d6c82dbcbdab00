"""Evaluation workflows of the web process: registering models, enqueueing, retrying and
cancelling runs. Workers run them with evaluation.runs."""

from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.audit import audit
from annotation.errors import DomainError
from annotation.models import Project, Release
from evaluation.models import EvaluationRun, ModelSpec
from evaluation.tasks import run_evaluation_task

Status = EvaluationRun.Status


def model_register(*, project: Project, user: Any, **values: Any) -> ModelSpec:
    mapping = values.get("label_mapping") or {}
    if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
        raise DomainError("label_mapping must map model labels to project labels.")
    unknown = sorted(set(mapping.values()) - set(project.labels))
    if unknown:
        raise DomainError(
            f"label_mapping maps to {', '.join(unknown)}, which are not labels of this project "
            f"({', '.join(project.labels)})."
        )
    if values["kind"] == ModelSpec.Kind.PYTHON and ":" not in values["source"]:
        raise DomainError("A python model's source is package.module:callable.")
    if values["kind"] in (ModelSpec.Kind.HF_CAUSAL_LM, ModelSpec.Kind.HF_SEQ2SEQ):
        raise DomainError("Minimal-pair models are not supported yet; use a classifier.")
    if ModelSpec.objects.filter(project=project, name=values["name"]).exists():
        raise DomainError(f"A model named {values['name']!r} exists in this project.")
    spec = ModelSpec.objects.create(project=project, created_by=_user(user), **values)
    audit(actor=user, action="model_registered", project=project, model=spec.pk, name=spec.name)
    return spec


def _user(user: Any) -> Any:
    return user if getattr(user, "is_authenticated", False) else None


def evaluation_enqueue(
    *, release: Release, model: ModelSpec, split: str, user: Any, send: bool = True
) -> EvaluationRun:
    """Create a queued run and, once the transaction commits, send it to the worker queue
    (unless `send` is false: `manage.py evaluate --sync` runs it in its own process)."""
    if model.project_id != release.project_id:
        raise DomainError("The model and the release belong to different projects.")
    if split not in release.counts.get("sets", {}):
        raise DomainError(f"Release {release.version} has no {split} split.")
    run = EvaluationRun.objects.create(
        release=release, model=model, split=split, created_by=_user(user)
    )
    if send:
        _send(run)
    return run


def _send(run: EvaluationRun) -> None:
    transaction.on_commit(lambda: run_evaluation_task.delay(run.pk))


def evaluation_retry(*, run: EvaluationRun) -> EvaluationRun:
    """Run again from scratch; the new predictions replace the old ones."""
    if not run.finished:
        raise DomainError("Only a finished run can run again.", code="conflict")
    EvaluationRun.objects.filter(pk=run.pk).update(
        status=Status.QUEUED, done=0, error="", metrics={}, examples_per_second=None,
        started_at=None, finished_at=None, heartbeat_at=None,
    )  # fmt: skip
    run.refresh_from_db()
    _send(run)
    return run


def evaluation_cancel(*, run: EvaluationRun) -> EvaluationRun:
    EvaluationRun.objects.filter(pk=run.pk, status__in=[Status.QUEUED, Status.RUNNING]).update(
        status=Status.CANCELLED, finished_at=timezone.now()
    )
    run.refresh_from_db()
    return run
