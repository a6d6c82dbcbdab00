"""Runs across workers (docs/models.md): a run of `shards` > 1 is cut into that many parts by
contrast set, each a job (RunShard) that any worker of the evaluation queue may take; the
last shard to succeed sends the run itself, which merges every shard's predictions once and
computes the metrics over all of them, as the unsharded run would.

A shard whose worker dies is taken over like any job (its heartbeat goes stale) and computes
its rows again: they are kept on the shard, replaced whole, so nothing is counted twice. A
served model's answers are kept per run (ServedAnswer), so a shard taken over asks the server
only for what it has not answered.
"""

import time
from typing import Any

from django.db.models import Sum

from annotation import jobs
from annotation.models import Release
from annotation.prompting import Prompting
from annotation.releases.bundle import read_examples
from evaluation.metrics.pairs import pair_metrics
from evaluation.models import EvaluationRun, ModelSpec, RunShard, ServedAnswer
from evaluation.runners.base import RunnerError
from evaluation.runners.served import Answer
from evaluation.runs.pairs import pairs_of
from evaluation.runs.prompting import choice_rows
from evaluation.runs.scoring import label_metrics, scored_answers
from evaluation.runs.served import named_labels, usage_of

Kind = ModelSpec.Kind
# A python callable may answer with spans that a stored text cannot give back; a predictions
# file is read whole. Every other kind shards.
UNSHARDED = (Kind.PYTHON, Kind.PREDICTIONS)
MAX_SHARDS = 64


def part(examples: list[dict[str, Any]], index: int, shards: int) -> list[dict[str, Any]]:
    """The examples of shard `index`: a contiguous run of contrast sets, by first appearance,
    so that a set's members (and its pairs) stay together."""
    sets = list(dict.fromkeys(e["set_id"] for e in examples))
    size = -(-len(sets) // shards)
    mine = set(sets[index * size : (index + 1) * size])
    return [e for e in examples if e["set_id"] in mine]


def score_shard(shard: RunShard, scorer: Any) -> dict[str, Any]:
    """A shard's rows, with its progress (and the run's, the shards' sum) as it goes."""
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

    rows, _ = scorer(run.model, run.release, examples, advance)
    return {"rows": rows}


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


def merged(
    run: EvaluationRun, examples: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every shard's rows once, in the release's order, and the metrics over all of them."""
    shards = list(run.shard_jobs.order_by("index"))
    if len(shards) != run.shards or any(s.status != RunShard.Status.SUCCEEDED for s in shards):
        raise RunnerError("Not every shard of this run has succeeded: retry the run.")
    by_example = {(r["example"], r["role"]): r for s in shards for r in s.rows}
    rows = [by_example[e["id"], e["role"]] for e in examples]
    metrics = metrics_of(run.model, run.release, examples, rows)
    if run.model.kind == Kind.OPENAI_COMPATIBLE:
        answers = ServedAnswer.objects.filter(run=run)
        metrics["usage"] = usage_of(
            run.model,
            [Answer(a.value, a.prompt_tokens, a.completion_tokens, a.reused) for a in answers],
        )
    began = min(s.started_at for s in shards if s.started_at)
    seconds = max(time.time() - began.timestamp(), 1e-9)
    return rows, {**metrics, "shards": len(shards), "shard_seconds": round(seconds, 2)}


def metrics_of(
    spec: ModelSpec, release: Release, examples: list[dict[str, Any]], rows: list[dict[str, Any]]
) -> dict[str, Any]:
    """The metrics the run's scorer computes, from its prediction rows."""
    project = release.project
    if project.task_type == project.TaskType.MINIMAL_PAIR and spec.kind in spec.LANGUAGE_MODELS:
        own = {
            r["set_id"]: {"output": r["output"], "output_score": r["output_score"]}
            for r in rows
            if r["role"] == "original" and r.get("output_score") is not None
        }
        return pair_metrics(pairs_of(examples, [r["score"] for r in rows], own))
    if project.is_free_text:
        metrics = scored_answers(project, examples, [r["output"] for r in rows])[1]
    elif spec.kind in spec.LANGUAGE_MODELS and not _generated(spec):
        words = Prompting.of(project, spec.prompt, spec.verbalizers).words
        lls = [[r["loglikelihoods"][label] for label in project.labels] for r in rows]
        metrics = choice_rows(project, examples, words, lls)[1]
    elif _generated(spec):
        prompting = Prompting.of(project, spec.prompt, spec.verbalizers)
        metrics = named_labels(project, prompting, examples, [r["output"] for r in rows])[1]
    else:
        metrics = label_metrics(project, examples, [r["label"] for r in rows])
    return metrics


def _generated(spec: ModelSpec) -> bool:
    return spec.kind == Kind.OPENAI_COMPATIBLE and spec.scoring == ModelSpec.Scoring.GENERATION
