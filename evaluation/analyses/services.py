"""Analyses from the web process (docs/analyses.md): checking what is asked (`clean_*`), then
queueing it for a worker (evaluation.analyses.execute runs it). Cancel and retry work as for
evaluation runs."""

import math
from collections.abc import Callable
from typing import Any

from django.db import transaction

from annotation import jobs
from annotation.errors import DomainError
from annotation.models import AuditLog, Project, Release, user_or_none
from evaluation.analyses.tasks import run_analysis_task
from evaluation.models import Analysis, EvaluationRun, ModelSpec
from evaluation.runs.scoring import Classifier

Kind = Analysis.Kind
MAX_LEARNING_RATES, MAX_SIZES, MAX_EPOCHS = 5, 10, 100


def analysis_create(
    *, project: Project, user: Any, kind: str, params: dict[str, Any], send: bool = True
) -> Analysis:
    """Check `params` for `kind`, then queue the analysis (unless `send` is false: `manage.py
    analyse --sync` runs it in its own process)."""
    clean = {
        Kind.INSTABILITY.value: clean_instability,
        Kind.ARTIFACTS.value: clean_artifacts,
        Kind.INOCULATION.value: clean_inoculation,
    }.get(kind)
    if clean is None:
        raise DomainError(f"Unknown analysis {kind!r}; use {', '.join(Kind.values)}.", field="kind")
    cleaned = clean(project, params)
    analysis = Analysis.objects.create(
        project=project,
        kind=kind,
        params=cleaned,
        created_by=user_or_none(user),
    )
    AuditLog.record(
        actor=user, action="analysis_created", project=project, analysis=analysis.pk, kind=kind
    )
    if send:
        _send(analysis)
    return analysis


def analysis_cancel(*, analysis: Analysis) -> Analysis:
    return jobs.cancel(analysis)


def analysis_retry(*, analysis: Analysis) -> Analysis:
    """Run again, its attempts counted afresh; the last result stays until a new one succeeds."""
    jobs.requeue(analysis)
    _send(analysis)
    return analysis


def _send(analysis: Analysis) -> None:
    transaction.on_commit(lambda: run_analysis_task.delay(analysis.pk))


ACTIONS: dict[str, Callable[[Analysis], Analysis]] = {
    "cancel": lambda analysis: analysis_cancel(analysis=analysis),
    "retry": lambda analysis: analysis_retry(analysis=analysis),
}


def clean_instability(project: Project, params: dict[str, Any]) -> dict[str, Any]:
    ids = params.get("runs")
    if not isinstance(ids, list) or len(ids) < 2 or not all(_whole(i) for i in ids):
        raise DomainError("runs must list at least two run ids.", field="runs")
    runs = list(
        EvaluationRun.objects.filter(pk__in=ids, release__project=project).select_related("model")
    )
    if len(runs) != len(set(ids)):
        raise DomainError("Every run must be a run of this project.", field="runs")
    if any(r.status != EvaluationRun.Status.SUCCEEDED for r in runs):
        raise DomainError("Every run must have succeeded.", field="runs")
    if len({(r.release_id, r.split) for r in runs}) > 1:
        raise DomainError("The runs must score the same release and split.", field="runs")
    kinds = sorted({r.model.kind for r in runs})
    if len(kinds) > 1:
        raise DomainError(
            f"Seeds are runs of one recipe; these runs are of {' and '.join(kinds)} models.",
            field="runs",
        )
    if project.task_type == Project.TaskType.MINIMAL_PAIR:
        raise DomainError("Instability is computed for runs that predict labels.", field="runs")
    return {"runs": sorted(set(ids))}


def clean_artifacts(project: Project, params: dict[str, Any]) -> dict[str, Any]:
    release = _release(project, params)
    split = _split(release, params.get("split", "test"), "split")
    return {"release": release.pk, "split": split}


def clean_inoculation(project: Project, params: dict[str, Any]) -> dict[str, Any]:
    release = _release(project, params)
    pk: Any = params.get("model")
    model = ModelSpec.objects.filter(project=project, pk=pk).first() if _whole(pk) else None
    if model is None:
        raise DomainError("model must be a model of this project.", field="model")
    if model.kind != Classifier.name:
        raise DomainError("Inoculation fine-tunes an hf-sequence-classification model.")
    pool = _split(release, params.get("pool_split", "dev"), "pool_split")
    _split(release, "test", "release")
    _split(release, "dev", "release")  # early stopping reads the dev originals
    sets = release.counts["sets"][pool]
    sizes = params.get("sizes", [0, 50, 100])
    if (
        not isinstance(sizes, list)
        or not 0 < len(sizes) <= MAX_SIZES
        or not all(_whole(s) and 0 <= s <= sets for s in sizes)
    ):
        raise DomainError(f"sizes must be up to {MAX_SIZES} numbers of sets from 0 to {sets}.")
    rates = params.get("learning_rates", [1e-5, 3e-5])
    if (
        not isinstance(rates, list)
        or not 0 < len(rates) <= MAX_LEARNING_RATES
        or not all(_number(r) and 0 < r < 1 for r in rates)
    ):
        raise DomainError("learning_rates must be up to 5 numbers between 0 and 1.")
    epochs, seed, delta = (
        params.get("max_epochs", 10),
        params.get("seed", 0),
        params.get("delta", 2.0),
    )
    if not _whole(epochs) or not 1 <= epochs <= MAX_EPOCHS:
        raise DomainError(f"max_epochs must be from 1 to {MAX_EPOCHS}.", field="max_epochs")
    if not _whole(seed) or not 0 <= seed < 2**32:
        raise DomainError("seed must be a whole number from 0 to 2^32 - 1.", field="seed")
    if not _number(delta) or not 0 <= delta <= 100:
        raise DomainError("delta must be from 0 to 100 percentage points.", field="delta")
    return {
        "release": release.pk,
        "model": model.pk,
        "pool_split": pool,
        "sizes": sorted(set(sizes)),
        "learning_rates": sorted(set(rates)),
        "max_epochs": epochs,
        "seed": seed,
        "delta": float(delta),
    }


def _release(project: Project, params: dict[str, Any]) -> Release:
    pk: Any = params.get("release")
    release = project.releases.filter(pk=pk).first() if _whole(pk) else None
    if release is None:
        raise DomainError("release must be a release of this project.", field="release")
    return release


def _split(release: Release, split: Any, field: str) -> str:
    if split not in release.counts.get("sets", {}):
        raise DomainError(f"Release {release.version} has no {split} split.", field=field)
    return str(split)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
