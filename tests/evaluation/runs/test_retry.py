"""Retrying a run or an analysis (issue 48, item 3): the retry counts its attempts afresh, and the
results of the last success stay until a new attempt succeeds."""

import pytest

from evaluation.analyses.execute import run_analysis
from evaluation.analyses.services import analysis_create, analysis_retry
from evaluation.models import Analysis, EvaluationRun, ModelSpec
from evaluation.runs.execute import run_evaluation
from evaluation.runs.services import evaluation_cancel, evaluation_enqueue, evaluation_retry

pytestmark = pytest.mark.django_db


def scored_run(released):  # type: ignore[no-untyped-def]
    model = ModelSpec.objects.create(
        project=released.project,
        name="m",
        kind="python",
        source="tests.evaluation.rule_models:keyword",
    )
    run = evaluation_enqueue(release=released, model=model, split="test", user=None, send=False)
    return run_evaluation(run.pk)


def test_a_run_failed_by_its_attempts_cap_runs_again_on_retry(released, settings):
    """Its error said "retry it", yet the retry failed in 0.5 s without running."""
    run = scored_run(released)
    EvaluationRun.objects.filter(pk=run.pk).update(
        status="failed", attempts=settings.JOB_MAX_ATTEMPTS, error="Its worker stopped 3 times"
    )
    evaluation_retry(run=run)
    again = run_evaluation(run.pk)
    assert again.status == "succeeded", again.error
    assert again.attempts == 1


def test_a_succeeded_run_retried_again_and_again_keeps_succeeding(released, settings):
    run = scored_run(released)
    for _ in range(settings.JOB_MAX_ATTEMPTS + 1):
        evaluation_retry(run=run)
        run = run_evaluation(run.pk)
        assert run.status == "succeeded", run.error
        assert run.attempts == 1


def test_a_retry_keeps_the_metrics_and_predictions_until_it_succeeds(released):
    run = scored_run(released)
    metrics = run.metrics
    predictions = set(run.predictions.values_list("pk", flat=True))
    assert metrics and predictions
    queued = evaluation_retry(run=run)
    assert queued.status == "queued" and queued.metrics == metrics
    assert set(queued.predictions.values_list("pk", flat=True)) == predictions

    def cancel_at_the_end(done: int, total: int) -> None:
        if done == total:  # scored, not yet stored: the stored results must stay
            evaluation_cancel(run=run)

    stopped = run_evaluation(run.pk, progress=cancel_at_the_end)
    assert stopped.status == "cancelled"
    assert stopped.metrics == metrics
    assert set(stopped.predictions.values_list("pk", flat=True)) == predictions
    evaluation_retry(run=run)
    again = run_evaluation(run.pk)
    assert again.status == "succeeded" and again.metrics.keys() == metrics.keys()
    assert predictions.isdisjoint(again.predictions.values_list("pk", flat=True))


def test_an_analysis_retry_resets_its_attempts_and_keeps_its_result(released, settings):
    created = analysis_create(
        project=released.project,
        user=None,
        kind="artifacts",
        params={"release": released.pk, "split": "test"},
        send=False,
    )
    analysis = run_analysis(created.pk)
    assert analysis.status == "succeeded", analysis.error
    result = analysis.result
    queued = analysis_retry(analysis=analysis)
    assert queued.status == "queued" and queued.result == result
    Analysis.objects.filter(pk=analysis.pk).update(attempts=settings.JOB_MAX_ATTEMPTS)
    assert run_analysis(analysis.pk) is None  # failed by the cap before it ran
    capped = Analysis.objects.get(pk=analysis.pk)
    assert capped.status == "failed" and capped.result == result
    analysis_retry(analysis=capped)
    again = run_analysis(analysis.pk)
    assert again.status == "succeeded" and again.attempts == 1 and again.result == result
