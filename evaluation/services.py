"""Evaluation workflows: registering models, enqueueing runs, and running them.

Runs read only the released bundle (never the live annotation tables)."""

import json
import logging
import time
import zipfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.audit import audit
from annotation.models import Project, Release
from evaluation.metrics import Scored, contrast_metrics
from evaluation.models import EvaluationRun, ModelSpec, Prediction

Status = EvaluationRun.Status
logger = logging.getLogger(__name__)


class Cancelled(Exception):
    pass


class RunBusy(Exception):
    """Another live worker is running this evaluation (a redelivered message); try later."""


def model_register(*, project: Project, user: Any, **values: Any) -> ModelSpec:
    mapping = values.get("label_mapping") or {}
    if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
        raise ValidationError("label_mapping must map model labels to project labels.")
    unknown = sorted(set(mapping.values()) - set(project.labels))
    if unknown:
        raise ValidationError(
            f"label_mapping maps to {', '.join(unknown)}, which are not labels of this project "
            f"({', '.join(project.labels)})."
        )
    if values["kind"] == ModelSpec.Kind.PYTHON and ":" not in values["source"]:
        raise ValidationError("A python model's source is package.module:callable.")
    if values["kind"] in (ModelSpec.Kind.HF_CAUSAL_LM, ModelSpec.Kind.HF_SEQ2SEQ):
        raise ValidationError("Minimal-pair models are not supported yet; use a classifier.")
    if ModelSpec.objects.filter(project=project, name=values["name"]).exists():
        raise ValidationError(f"A model named {values['name']!r} exists in this project.")
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
        raise ValidationError("The model and the release belong to different projects.")
    if split not in release.counts.get("sets", {}):
        raise ValidationError(f"Release {release.version} has no {split} split.")
    run = EvaluationRun.objects.create(
        release=release, model=model, split=split, created_by=_user(user)
    )
    if send:
        _send(run)
    return run


def _send(run: EvaluationRun) -> None:
    from evaluation.tasks import run_evaluation_task

    transaction.on_commit(lambda: run_evaluation_task.delay(run.pk))


def evaluation_retry(*, run: EvaluationRun) -> EvaluationRun:
    """Run again from scratch; the new predictions replace the old ones."""
    if not run.finished:
        raise ValidationError("Only a finished run can run again.")
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


def released_examples(release: Release, split: str) -> list[dict[str, Any]]:
    """The examples of one split, read from the release's own bundle."""
    path = Path(settings.MEDIA_ROOT) / release.bundle
    out = []
    with zipfile.ZipFile(path) as bundle, bundle.open("sets.jsonl") as handle:
        for line in handle:
            record = json.loads(line)
            if record["split"] != split:
                continue
            members = [
                {**record["original"], "role": "original", "tags": []},
                *({**p, "role": "perturbed"} for p in record["perturbations"]),
            ]
            for member in members:
                out.append(
                    {
                        "id": member["id"],
                        "set_id": record["set_id"],
                        "role": member["role"],
                        "fields": member["fields"],
                        "label": member["label"],
                        "tags": member["tags"],
                    }
                )
    return out


def _claim(run_id: int) -> EvaluationRun | None:
    """Mark the run running for this worker; None if it is finished. Raises RunBusy if another
    live worker runs it (its heartbeat is fresh): a redelivered message."""
    stale_after = timedelta(seconds=settings.EVALUATION_STALE_SECONDS)
    with transaction.atomic():
        run = EvaluationRun.objects.select_for_update().get(pk=run_id)
        if run.finished:
            return None
        now = timezone.now()
        alive = run.heartbeat_at is not None and now - run.heartbeat_at < stale_after
        if run.status == Status.RUNNING and alive:
            raise RunBusy(f"run {run_id} is running on another worker.")
        run.status, run.started_at, run.heartbeat_at = Status.RUNNING, now, now
        run.attempts += 1
        run.done = 0
        run.save(update_fields=["status", "started_at", "heartbeat_at", "attempts", "done"])
        return run


def evaluation_execute(run_id: int, *, progress: Any = None) -> EvaluationRun | None:
    """Score a run's split of its release, store predictions and metrics. Errors the admin can
    fix are stored on the run as `failed` with their message."""
    from evaluation.runners import RunnerError

    run = _claim(run_id)
    if run is None:
        return None
    try:
        _score(run, progress)
    except Cancelled:
        pass
    except (RunnerError, ValidationError, OSError, KeyError) as error:
        _finish(run, Status.FAILED, error=str(error) or error.__class__.__name__)
    except Exception as error:  # a model's own code failed: keep the message, mark failed
        logger.exception("evaluation run %s failed", run.pk)
        _finish(run, Status.FAILED, error=f"{error.__class__.__name__}: {error}")
    run.refresh_from_db()
    return run


def _score(run: EvaluationRun, progress: Any) -> None:
    from evaluation.runners import RunnerError, SequenceClassifier, predict_python

    spec, project = run.model, run.release.project
    examples = released_examples(run.release, run.split)
    EvaluationRun.objects.filter(pk=run.pk).update(total=len(examples))
    started = time.monotonic()
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        rate = done / max(time.monotonic() - started, 1e-9)
        updated = EvaluationRun.objects.filter(pk=run.pk, status=Status.RUNNING).update(
            done=done, examples_per_second=round(rate, 2), heartbeat_at=timezone.now()
        )
        if not updated:
            raise Cancelled
        if progress:
            progress(done, len(examples))

    fields = [[e["fields"][name] for name in project.field_names] for e in examples]
    if spec.kind == ModelSpec.Kind.PYTHON:
        dicts = [e["fields"] for e in examples]
        result = predict_python(spec.source, dicts, spec.batch_size, advance)
    else:
        model = SequenceClassifier(spec.source, device=spec.device, max_length=spec.max_length)
        _check_mapping(spec, list(model.id2label.values()), project.labels)
        advance(0)  # loading may take a while: show we are alive
        result = model.predict(fields, spec.batch_size, advance)
    mapping = spec.label_mapping or {}
    predicted = [mapping.get(label, label) for label in result.labels]
    strays = sorted(set(predicted) - set(project.labels))
    if strays:
        raise RunnerError(
            f"The model predicted {', '.join(strays)}, which map to no project label; "
            f"set label_mapping (project labels: {', '.join(project.labels)})."
        )
    with transaction.atomic():
        Prediction.objects.filter(run=run).delete()
        Prediction.objects.bulk_create(
            (
                Prediction(
                    run=run,
                    example=e["id"],
                    set_id=e["set_id"],
                    role=e["role"],
                    gold=e["label"],
                    label=label,
                    probabilities=probs,
                )
                for e, label, probs in zip(examples, predicted, result.probabilities, strict=True)
            ),
            batch_size=2000,
        )
        scored = [
            Scored(e["set_id"], e["role"], e["label"], label, tuple(e["tags"]))
            for e, label in zip(examples, predicted, strict=True)
        ]
        metrics = contrast_metrics(scored, project.labels)
        elapsed = time.monotonic() - started
        metrics["examples_per_second"] = round(len(examples) / max(elapsed, 1e-9), 2)
        _finish(run, Status.SUCCEEDED, metrics=metrics)


def _check_mapping(spec: ModelSpec, model_labels: list[str], project_labels: list[str]) -> None:
    from evaluation.runners import RunnerError

    mapping = spec.label_mapping or {}
    unknown = sorted(set(mapping) - set(model_labels))
    if unknown:
        raise RunnerError(
            f"label_mapping names {', '.join(unknown)}, which the model does not have "
            f"(it has {', '.join(model_labels)})."
        )
    unmapped = [m for m in model_labels if mapping.get(m, m) not in project_labels]
    if unmapped:
        raise RunnerError(
            f"The model's labels {', '.join(unmapped)} do not map to project labels "
            f"({', '.join(project_labels)}); set label_mapping."
        )


def _finish(run: EvaluationRun, status: str, *, error: str = "", metrics: Any = None) -> None:
    EvaluationRun.objects.filter(pk=run.pk).exclude(status=Status.CANCELLED).update(
        status=status, error=error[:5000], metrics=metrics or {}, finished_at=timezone.now(),
        heartbeat_at=timezone.now(),
    )  # fmt: skip
