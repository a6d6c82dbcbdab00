"""Running an evaluation on a worker: claim the run, score its split of the released bundle with
the scorer for its model's kind, store predictions and metrics. Runs read only the bundle, never
the live annotation tables."""

import time
from collections.abc import Callable
from functools import partial
from typing import Any

from annotation import jobs
from annotation.models import Project, Release
from annotation.releases.bundle import read_examples
from evaluation.models import EvaluationRun, ModelSpec, Prediction, RunShard
from evaluation.runners.base import LoadError, RunnerError
from evaluation.runs import shards
from evaluation.runs.pairs import run_language_model
from evaluation.runs.predictions import run_predictions
from evaluation.runs.prompting import run_choices, run_generation
from evaluation.runs.scoring import run_classifier, run_reader
from evaluation.runs.served import run_served
from evaluation.specs.services import is_trusted, not_loaded


def run_evaluation(run_id: int, *, progress: Any = None) -> EvaluationRun | None:
    """Score a run's split of its release, store predictions and metrics (annotation.jobs
    handles claiming, failures and cancellation). None if the run already finished."""
    return jobs.execute(
        EvaluationRun, run_id, lambda run: _scored(run, progress), expected=(RunnerError,)
    )


def _scored(run: EvaluationRun, progress: Any) -> dict[str, Any]:
    """_score, where a model a non-staff admin registered fails to load with one answer,
    whether the hub refused it or a folder of that name lies on the worker's disk."""
    try:
        return _score(run, progress)
    except LoadError:
        if is_trusted(run.model):
            raise
        raise not_loaded(run.model) from None


Scorer = Callable[[ModelSpec, Release, list[dict[str, Any]], Any], tuple[list[Any], dict[str, Any]]]
Type = Project.TaskType
# Who scores a release, by the kind of model (a language model, or one fine-tuned for the task)
# and the project's task type. A predictions file is read, whatever the task.
SCORERS: dict[tuple[bool, str], Scorer] = {
    (True, Type.CLASSIFICATION): run_choices,
    (True, Type.FREE_TEXT): run_generation,
    (True, Type.MINIMAL_PAIR): run_language_model,
    (False, Type.CLASSIFICATION): run_classifier,
    (False, Type.FREE_TEXT): run_reader,
    (False, Type.MINIMAL_PAIR): run_classifier,  # acceptable or not, as CoLA's classifiers
}


def scorer_of(spec: ModelSpec, project: Project) -> Scorer:
    if spec.kind == ModelSpec.Kind.PREDICTIONS:
        return run_predictions
    return SCORERS[spec.kind in ModelSpec.LANGUAGE_MODELS, project.task_type]


def scorer_for(run: EvaluationRun) -> Scorer:
    """The run's scorer; a served model's keeps its answers on the run, so that it resumes."""
    if run.model.kind == ModelSpec.Kind.OPENAI_COMPATIBLE:
        return partial(run_served, run)
    return scorer_of(run.model, run.release.project)


def run_shard(shard_id: int) -> RunShard | None:
    """Score one shard of a run (evaluation/runs/shards.py). None if it already finished."""
    return jobs.execute(RunShard, shard_id, _shard_rows, expected=(RunnerError,))


def _shard_rows(shard: RunShard) -> dict[str, Any]:
    try:
        return shards.score_shard(shard, scorer_for(shard.run))
    except LoadError:  # the same one answer as an unsharded run's (_scored)
        if is_trusted(shard.run.model):
            raise
        raise not_loaded(shard.run.model) from None


def _score(run: EvaluationRun, progress: Any) -> dict[str, Any]:
    spec = run.model
    examples = read_examples(run.release, run.split)
    EvaluationRun.objects.filter(pk=run.pk).update(total=len(examples))
    started = time.monotonic()
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        rate = done / max(time.monotonic() - started, 1e-9)
        jobs.heartbeat(run, done=done, examples_per_second=round(rate, 2))
        if progress:
            progress(done, len(examples))

    if run.shards > 1:  # every shard succeeded: merge their rows
        rows, metrics = shards.merged(run, examples)
        advance(len(examples))
    else:
        rows, metrics = scorer_for(run)(spec, run.release, examples, advance)
    # The last success's predictions and metrics are replaced together, and only while this
    # attempt still holds the run: one cancelled (or taken over) meanwhile keeps them.
    with jobs.holding(run) as held:
        Prediction.objects.filter(run=run).delete()
        Prediction.objects.bulk_create(
            (Prediction(run=run, **row) for row in rows), batch_size=2000
        )
        elapsed = metrics.pop("shard_seconds", None) or time.monotonic() - started
        metrics["examples_per_second"] = round(len(examples) / max(elapsed, 1e-9), 2)
        if spec.kind != ModelSpec.Kind.OPENAI_COMPATIBLE:  # the server's own
            metrics["precision"] = spec.precision
        held.update(metrics=metrics)
    return {"metrics": metrics, "examples_per_second": metrics["examples_per_second"]}
