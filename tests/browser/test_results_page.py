import pytest

from evaluation.models import ModelSpec
from evaluation.runs import evaluation_execute
from evaluation.services import evaluation_enqueue
from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser


def test_results_page_renders_charts_and_failed_sets(page, login, project, released):
    spec = ModelSpec.objects.create(
        project=project, name="rules", kind="python",
        source="tests.evaluation.rule_models:keyword",
    )  # fmt: skip
    run = evaluation_enqueue(release=released, model=spec, split="test", user=None, send=False)
    evaluation_execute(run.pk)
    login("alice")
    page.goto(f"/p/{project.slug}/evaluations/{run.pk}/")
    page.locator("#results").wait_for()
    assert "83.3%" in page.inner_text("#results")  # consistency 5/6
    page.wait_for_function("document.querySelectorAll('#results canvas').length === 2")
    drawn = page.evaluate(
        "Array.from(document.querySelectorAll('#results canvas'))"
        ".map(c => Chart.getChart(c).data.datasets.length)"
    )
    assert drawn == [2, 2]  # values and their intervals
    failed = page.inner_text("#failed-sets")
    assert "s0" in failed and "awful" in failed
    assert page.locator("#failed-sets ins:has-text('awful')").count() == 1
    assert page.locator("#confusion tbody tr").count() == 2
    screenshot(page, "results")


def test_progress_updates_live_while_a_run_is_queued(page, login, project, released):
    spec = ModelSpec.objects.create(
        project=project, name="rules", kind="python",
        source="tests.evaluation.rule_models:keyword",
    )  # fmt: skip
    run = evaluation_enqueue(release=released, model=spec, split="test", user=None, send=False)
    login("alice")
    page.goto(f"/p/{project.slug}/evaluations/{run.pk}/")
    assert page.inner_text("#run-status") == "queued"
    evaluation_execute(run.pk)  # as the worker would
    page.locator("#results").wait_for(timeout=10_000)  # htmx polling refreshes the page
    assert page.inner_text("#run-status") == "succeeded"
