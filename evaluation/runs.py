"""Running an evaluation on a worker: claim the run, score its split of the released bundle,
store predictions and metrics. Runs read only the bundle, never the live annotation tables."""

import logging
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.errors import DomainError
from annotation.releases.bundle import read_examples
from evaluation.metrics.contrast import Scored, contrast_metrics
from evaluation.minimal_pairs import score_pairs
from evaluation.models import EvaluationRun, ModelSpec, Prediction
from evaluation.runners.base import RunnerError
from evaluation.runners.classifier import SequenceClassifier
from evaluation.runners.python import predict_python

Status = EvaluationRun.Status

logger = logging.getLogger(__name__)


class Cancelled(Exception):
    pass


class RunBusy(Exception):
    """Another live worker is running this evaluation (a redelivered message); try later."""


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
    run = _claim(run_id)
    if run is None:
        return None
    try:
        _score(run, progress)
    except Cancelled:
        pass
    except (RunnerError, DomainError, OSError, KeyError) as error:
        _finish(run, Status.FAILED, error=str(error) or error.__class__.__name__)
    except Exception as error:  # a model's own code failed: keep the message, mark failed
        logger.exception("evaluation run %s failed", run.pk)
        _finish(run, Status.FAILED, error=f"{error.__class__.__name__}: {error}")
    run.refresh_from_db()
    return run


def _score(run: EvaluationRun, progress: Any) -> None:
    spec, project = run.model, run.release.project
    examples = read_examples(run.release, run.split)
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

    if spec.kind in ModelSpec.LANGUAGE_MODELS:
        rows, metrics = score_pairs(spec, examples, advance)
    else:
        rows, metrics = _classify(spec, project, examples, advance)
    with transaction.atomic():
        Prediction.objects.filter(run=run).delete()
        Prediction.objects.bulk_create(
            (Prediction(run=run, **row) for row in rows), batch_size=2000
        )
        elapsed = time.monotonic() - started
        metrics["examples_per_second"] = round(len(examples) / max(elapsed, 1e-9), 2)
        metrics["precision"] = spec.precision
        _finish(run, Status.SUCCEEDED, metrics=metrics)


def _classify(
    spec: ModelSpec, project: Any, examples: list[dict[str, Any]], advance: Any
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Predictions (as Prediction fields) and contrast-set metrics of a classifier."""
    fields = [[e["fields"][name] for name in project.field_names] for e in examples]
    if spec.kind == ModelSpec.Kind.PYTHON:
        dicts = [e["fields"] for e in examples]
        result = predict_python(spec.source, dicts, spec.batch_size, advance)
    else:
        model = SequenceClassifier(
            spec.source, device=spec.device, precision=spec.precision, max_length=spec.max_length
        )
        _check_mapping(spec, list(model.id2label.values()), project.labels)
        advance(0)  # loading may take a while: show we are alive
        result = model.predict(fields, spec.batch_size, advance)
    mapping = spec.label_mapping or {}
    predicted = [mapping.get(label, label) for label in result.labels]
    strays = sorted(set(predicted) - set(project.labels))
    if strays:
        raise DomainError(
            f"The model predicted {', '.join(strays)}, which map to no project label; "
            f"set label_mapping (project labels: {', '.join(project.labels)})."
        )
    rows = [
        {"example": e["id"], "set_id": e["set_id"], "role": e["role"], "gold": e["label"],
         "label": label, "probabilities": probs}
        for e, label, probs in zip(examples, predicted, result.probabilities, strict=True)
    ]  # fmt: skip
    scored = [
        Scored(e["set_id"], e["role"], e["label"], label, tuple(e["tags"]))
        for e, label in zip(examples, predicted, strict=True)
    ]
    return rows, contrast_metrics(scored, project.labels)


def _check_mapping(spec: ModelSpec, model_labels: list[str], project_labels: list[str]) -> None:
    mapping = spec.label_mapping or {}
    unknown = sorted(set(mapping) - set(model_labels))
    if unknown:
        raise DomainError(
            f"label_mapping names {', '.join(unknown)}, which the model does not have "
            f"(it has {', '.join(model_labels)})."
        )
    unmapped = [m for m in model_labels if mapping.get(m, m) not in project_labels]
    if unmapped:
        raise DomainError(
            f"The model's labels {', '.join(unmapped)} do not map to project labels "
            f"({', '.join(project_labels)}); set label_mapping."
        )


def _finish(run: EvaluationRun, status: str, *, error: str = "", metrics: Any = None) -> None:
    EvaluationRun.objects.filter(pk=run.pk).exclude(status=Status.CANCELLED).update(
        status=status, error=error[:5000], metrics=metrics or {}, finished_at=timezone.now(),
        heartbeat_at=timezone.now(),
    )  # fmt: skip
