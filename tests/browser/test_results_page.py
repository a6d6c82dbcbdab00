import pytest
from playwright.sync_api import expect

from evaluation.models import ModelSpec
from evaluation.runs.execute import run_evaluation
from evaluation.runs.services import evaluation_enqueue
from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser


def test_results_page_renders_charts_and_failed_sets(page, login, project, released):
    spec = ModelSpec.objects.create(
        project=project, name="rules", kind="python",
        source="tests.evaluation.rule_models:keyword",
    )  # fmt: skip
    run = evaluation_enqueue(release=released, model=spec, split="test", user=None, send=False)
    run_evaluation(run.pk)
    login("alice")
    page.goto(f"/p/{project.slug}/evaluations/{run.pk}/")
    expect(page.locator("#results")).to_contain_text("83.3%")  # consistency 5/6
    expect(page.locator("#results canvas")).to_have_count(2)
    drawn = page.evaluate(
        "Array.from(document.querySelectorAll('#results canvas'))"
        ".map(c => Chart.getChart(c).data.datasets.length)"
    )
    assert drawn == [2, 2]  # values and their intervals
    failed = page.inner_text("#failed-sets")
    assert "s0" in failed and "awful" in failed
    assert page.locator("#failed-sets ins:has-text('awful')").count() == 1
    assert page.locator("#confusion tbody tr").count() == 2
    # A cell on a saturated background is written in white, so its count stays readable
    colours = page.evaluate(
        "Array.from(document.querySelectorAll('#confusion td')).map(td => {"
        " const alpha = parseFloat(getComputedStyle(td).backgroundColor.split(',')[3] || '1');"
        " return [alpha, getComputedStyle(td).color]; })"
    )
    assert colours and all((c == "rgb(255, 255, 255)") == (a > 0.5) for a, c in colours)
    screenshot(page, "results")


def test_progress_updates_live_while_a_run_is_queued(page, login, project, released):
    spec = ModelSpec.objects.create(
        project=project, name="rules", kind="python",
        source="tests.evaluation.rule_models:keyword",
    )  # fmt: skip
    run = evaluation_enqueue(release=released, model=spec, split="test", user=None, send=False)
    login("alice")
    page.goto(f"/p/{project.slug}/evaluations/{run.pk}/")
    expect(page.locator("#run-status")).to_have_text("queued")
    run_evaluation(run.pk)  # as the worker would
    # htmx polling swaps the status and the results in, with no reload
    expect(page.locator("#run-status")).to_have_text("succeeded", timeout=10_000)
    expect(page.locator("#results")).to_be_visible()


def test_minimal_pair_results_show_pairs_scores_and_the_models_own_output(
    page, login, people, settings, tmp_path
):
    from annotation.models import Perturbation
    from annotation.projects.services import project_create
    from annotation.releases.services import release_create
    from tests.evaluation.conftest import build_tiny_gpt2
    from tests.factories import ExampleFactory, submitted_perturbation

    settings.MEDIA_ROOT = tmp_path / "media"
    admin = people["admin"]
    project = project_create(
        user=admin, name="Pairs", slug="pairs", task_type="minimal_pair",
        fields=[{"name": "text", "editable": True}, {"name": "source", "editable": False}],
        labels=["acceptable", "unacceptable"], tags=[{"name": "agreement"}],
    )  # fmt: skip
    for n, (good, bad) in enumerate([("the film was good .", "the films was good ."),
                                     ("a plot is bad .", "a plot are bad .")]):  # fmt: skip
        pivot = ExampleFactory(project=project, external_id=f"s{n}", label="acceptable",
                               fields={"text": good, "source": "le film est bon ."})  # fmt: skip
        p = submitted_perturbation(project, admin, pivot=pivot, text=bad, label="unacceptable",
                                   tag="agreement")  # fmt: skip
        Perturbation.objects.filter(pk=p.pk).update(status="accepted")
    release = release_create(project=project, user=admin, version="1")
    model = build_tiny_gpt2(tmp_path / "gpt2")
    spec = ModelSpec.objects.create(project=project, name="gpt2", kind="hf-causal-lm",
                                    source=str(model), max_new_tokens=4)  # fmt: skip
    run = evaluation_enqueue(release=release, model=spec, split="test", user=None, send=False)
    assert run_evaluation(run.pk).status == "succeeded"
    login("alice")
    page.goto(f"/p/{project.slug}/evaluations/{run.pk}/")
    results = page.locator("#results")
    expect(results).to_contain_text("Pair accuracy")
    expect(results).to_contain_text("Distributional discrepancy")
    expect(page.locator("#results canvas")).to_have_count(3)
    drawn = page.evaluate(
        "Array.from(document.querySelectorAll('#results canvas'))"
        ".map(c => Chart.getChart(c) ? Chart.getChart(c).data.datasets.length : 0)"
    )
    assert drawn == [2, 2, 1]  # values with intervals, per tag, the histogram
    run.refresh_from_db()
    m = run.metrics
    wrong = round((1 - m["pair_accuracy"]) * m["counts"]["pairs"])
    assert page.locator("#failed-sets tbody tr").count() == wrong
    if wrong:  # each wrong pair shows its edit and the model's own output for the source
        shown = page.inner_text("#failed-sets")
        originals = run.predictions.filter(role="original")
        assert page.locator("#failed-sets ins").count() >= 1
        assert any(f"({p.output_score:.3f})" in shown for p in originals)
    screenshot(page, "results-minimal-pairs")


def test_analysis_pages_create_an_analysis_and_draw_its_charts(page, login, project, released):
    import numpy as np

    from annotation.releases.bundle import read_examples
    from evaluation.analyses.execute import run_analysis
    from evaluation.models import Analysis, EvaluationRun, Prediction

    spec = ModelSpec.objects.create(project=project, name="m", kind="python", source="a.b:c")
    examples = read_examples(released, "test")
    correct = np.random.default_rng(1).random((4, len(examples))) < 0.6
    for k in range(4):
        run = EvaluationRun.objects.create(release=released, model=spec, status="succeeded")
        Prediction.objects.bulk_create(
            Prediction(run=run, example=e["id"], set_id=e["set_id"], role=e["role"],
                       gold=e["label"], label=e["label"] if correct[k, i] else "x")
            for i, e in enumerate(examples)
        )  # fmt: skip
    login("alice")
    page.goto(f"/p/{project.slug}/analyses/")
    page.select_option("select[name=kind]", "instability")
    page.select_option("select[name=runs]", [str(r.pk) for r in EvaluationRun.objects.all()])
    page.click("#analysis-form button[type=submit]")
    page.wait_for_url("**/analyses/*/")
    analysis = Analysis.objects.get()
    assert analysis.kind == "instability" and analysis.status == "queued"
    run_analysis(analysis.pk)  # as the worker would; htmx refreshes the page
    expect(page.locator("#results canvas")).to_have_count(2, timeout=10_000)
    drawn = page.evaluate(
        "Array.from(document.querySelectorAll('#results canvas'))"
        ".map(c => Chart.getChart(c) ? Chart.getChart(c).data.datasets.length : 0)"
    )
    assert drawn == [2, 3]  # the two variance parts; accuracies of originals, perturbed, sets
    expect(page.locator("#results")).to_contain_text("covariance share")
    ids = ", ".join(str(pk) for pk in analysis.params["runs"])
    expect(page.locator("#analysis-params")).to_have_text(f"Parameters: runs: {ids}")  # no dict
    screenshot(page, "analysis-instability")
