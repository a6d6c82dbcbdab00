"""Runs across workers (docs/models.md): a run of `shards` > 1 is cut into that many parts by
contrast set, each a job (RunShard) that any worker of the evaluation queue may take; the
last shard to succeed sends the run itself, which merges every shard's part once, as it
merges the one part of a run in one piece (evaluation/runs/execute.py): the same metrics.

A shard whose worker dies is taken over like any job (its heartbeat goes stale) and computes
its rows again: they are kept on the shard, replaced whole, so nothing is counted twice. A
served model's answers are kept per run (ServedAnswer), so a shard taken over asks the server
only for what it has not answered.
"""

from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.db.models import Sum

from annotation import jobs
from annotation.releases.bundle import read_examples
from evaluation.models import EvaluationRun, RunShard
from evaluation.runners.base import RunnerError
from evaluation.runs.scorer import Advance, ScoredPart

MAX_SHARDS = 64
Score = Callable[[EvaluationRun, list[dict[str, Any]], Advance], ScoredPart]


def part(examples: list[dict[str, Any]], index: int, shards: int) -> list[dict[str, Any]]:
    """The examples of shard `index`: a contiguous run of contrast sets, by first appearance,
    so that a set's members (and its pairs) stay together."""
    sets = list(dict.fromkeys(e["set_id"] for e in examples))
    size = -(-len(sets) // shards)
    mine = set(sets[index * size : (index + 1) * size])
    return [e for e in examples if e["set_id"] in mine]


def score_shard(shard: RunShard, score: Score) -> dict[str, Any]:
    """A shard's rows, scored by `score` (the one way every part of every run is), with its
    progress (and the run's, the shards' sum) as it goes."""
    run = shard.run
    if run.status == EvaluationRun.Status.CANCELLED:
        raise jobs.Cancelled
    every = read_examples(run.release, run.split)
    examples = part(every, shard.index, run.shards)
    for index in range(run.shards):  # every shard's size, so that the run's total is whole
        size = len(examples) if index == shard.index else len(part(every, index, run.shards))
        RunShard.objects.filter(run=run, index=index, done=0).update(total=size)
    RunShard.objects.filter(pk=shard.pk).update(total=len(examples))
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        jobs.heartbeat(shard, done=done)
        sums = run.shard_jobs.aggregate(done=Sum("done"), total=Sum("total"))
        EvaluationRun.objects.filter(pk=run.pk, status=EvaluationRun.Status.QUEUED).update(
            done=sums["done"] or 0, total=sums["total"] or 0
        )

    scored = score(run, examples, advance)
    return {"rows": scored.rows, "notes": scored.notes}


def shard_finished(shard: RunShard) -> bool:
    """After a shard's attempt: whether the run should now merge (every shard succeeded). A
    shard that failed fails the run with its reason, and its siblings stop."""
    run = shard.run
    if shard.status == RunShard.Status.FAILED:
        jobs.finish(
            run,
            EvaluationRun.Status.FAILED,
            error=f"Shard {shard.index + 1} of {run.shards}: {shard.error}",
        )
        for sibling in run.shard_jobs.exclude(pk=shard.pk):
            jobs.cancel(sibling)
        return False
    statuses = set(run.shard_jobs.values_list("status", flat=True))
    return statuses == {RunShard.Status.SUCCEEDED}


def stored_parts(run: EvaluationRun) -> tuple[list[ScoredPart], datetime]:
    """Every shard's part, in order, and when the first started."""
    shards = list(run.shard_jobs.order_by("index"))
    if len(shards) != run.shards or any(s.status != RunShard.Status.SUCCEEDED for s in shards):
        raise RunnerError("Not every shard of this run has succeeded: retry the run.")
    began = min(s.started_at for s in shards if s.started_at)
    return [ScoredPart(s.rows, s.notes) for s in shards], began
