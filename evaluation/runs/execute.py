"""Running an evaluation on a worker (docs/models.md): claim the run, have its model's kind
(evaluation/runs/kinds.py) score its split of the released bundle, store the predictions and
the metrics its task type computes from them (evaluation/runs/task_types.py).

Every run takes one path: its parts are scored, then merged once. A run in one piece is one
part, scored here; a sharded run's parts were scored by its shards (evaluation/runs/shards.py).
Runs read only the bundle, never the live annotation tables."""

import time
from datetime import datetime
from typing import Any

from django.utils import timezone

from annotation import jobs
from annotation.releases.bundle import read_examples
from evaluation.models import EvaluationRun, Prediction, RunShard
from evaluation.runners.base import LoadError, RunnerError
from evaluation.runs import shards
from evaluation.runs.kinds import kind_of
from evaluation.runs.scorer import Advance, ScoredPart
from evaluation.runs.sources import is_trusted, not_loaded
from evaluation.runs.task_types import task_metrics

Examples = list[dict[str, Any]]


def run_evaluation(run_id: int, *, progress: Any = None) -> EvaluationRun | None:
    """Score a run's split of its release, store predictions and metrics (annotation.jobs
    handles claiming, failures and cancellation). None if the run already finished."""
    return jobs.execute(
        EvaluationRun, run_id, lambda run: _finish(run, progress), expected=(RunnerError,)
    )


def run_shard(shard_id: int) -> RunShard | None:
    """Score one shard of a run (evaluation/runs/shards.py). None if it already finished."""
    return jobs.execute(
        RunShard, shard_id, lambda shard: shards.score_shard(shard, scored), expected=(RunnerError,)
    )


def scored(run: EvaluationRun, examples: Examples, advance: Advance) -> ScoredPart:
    """The rows of `examples` by the run's model kind. A model a non-staff admin registered
    fails to load with one answer, whether the hub refused it or a folder of that name lies
    on the worker's disk."""
    try:
        return kind_of(run.model).score(run, examples, advance)
    except LoadError:
        if is_trusted(run.model):
            raise
        raise not_loaded(run.model) from None


def _finish(run: EvaluationRun, progress: Any) -> dict[str, Any]:
    examples = read_examples(run.release, run.split)
    EvaluationRun.objects.filter(pk=run.pk).update(total=len(examples))
    advance = _progress(run, len(examples), progress)
    if run.shards > 1:  # every shard has succeeded: their parts
        parts, began = shards.stored_parts(run)
        advance(len(examples))
    else:
        parts, began = [scored(run, examples, advance)], run.started_at or timezone.now()
    rows, metrics = merged(run, examples, parts, began)
    # The last success's predictions and metrics are replaced together, and only while this
    # attempt still holds the run: one cancelled (or taken over) meanwhile keeps them.
    with jobs.holding(run) as held:
        Prediction.objects.filter(run=run).delete()
        Prediction.objects.bulk_create(
            (Prediction(run=run, **row) for row in rows), batch_size=2000
        )
        held.update(metrics=metrics)
    return {"metrics": metrics, "examples_per_second": metrics["examples_per_second"]}


def merged(
    run: EvaluationRun, examples: Examples, parts: list[ScoredPart], began: datetime
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every part's rows once, in the release's order, and the run's metrics over all of them:
    its task type's, its kind's figures, and its speed since `began` (the first part's start)."""
    by_example = {(row["example"], row["role"]): row for part in parts for row in part.rows}
    rows = [by_example[e["id"], e["role"]] for e in examples]
    spec = run.model
    metrics = task_metrics(run.release.project, examples, rows, spec.verbalizers)
    metrics |= kind_of(spec).figures(run, [part.notes for part in parts])
    if run.shards > 1:
        metrics["shards"] = run.shards
    seconds = max((timezone.now() - began).total_seconds(), 1e-9)
    metrics["examples_per_second"] = round(len(examples) / seconds, 2)
    return rows, metrics


def _progress(run: EvaluationRun, total: int, progress: Any) -> Advance:
    """The run's heartbeat, with the examples done and their rate (and `progress`'s call)."""
    started = time.monotonic()
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        rate = done / max(time.monotonic() - started, 1e-9)
        jobs.heartbeat(run, done=done, examples_per_second=round(rate, 2))
        if progress:
            progress(done, total)

    return advance
