"""The Results table in Chromium: a lab's two projects, two models registered under the same
names in each, one cell not yet scored; the table's figures are the runs' own, the downloads
are offered, "score the missing cells" queues the missing run; at 1280 px and at a phone's
390 px (the table scrolls inside its card, the page does not)."""

import pytest
from playwright.sync_api import expect

from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runs.execute import run_evaluation
from evaluation.runs.services import evaluation_enqueue
from tests.browser.conftest import screenshot
from tests.factories import MembershipFactory, ProjectFactory, member, released_contrast_sets

pytestmark = pytest.mark.browser
MODELS = {"keyword": "keyword", "lexicon": "lexicon_0"}


def _scored(release, name, run=True):  # type: ignore[no-untyped-def]
    spec = ModelSpec.objects.create(
        project=release.project, name=name, kind="python",
        source=f"tests.evaluation.rule_models:{MODELS[name]}",
    )  # fmt: skip
    if not run:
        return None
    made = evaluation_enqueue(release=release, model=spec, split="test", user=None, send=False)
    return run_evaluation(made.pk)


def test_the_results_table_page_at_desktop_and_phone_width(page, login, project, people, released):
    other = ProjectFactory(slug="reviews-2", name="Reviews, second lab set")
    MembershipFactory(project=other, user=people["admin"], role="admin")
    second = released_contrast_sets(
        other, {"admin": people["admin"], "expert": member(other, "ed", "expert")}
    )
    runs = [_scored(released, "keyword"), _scored(released, "lexicon"), _scored(second, "keyword")]
    _scored(second, "lexicon", run=False)  # registered, not yet scored

    login("alice")
    page.goto("/")
    page.click("#results-table-link")
    table = page.locator("#results-table")
    expect(table.locator("tbody tr")).to_have_count(2)
    first = runs[0]
    link = table.locator(f"a[href='/p/{project.slug}/evaluations/{first.pk}/']").first
    expect(link).to_have_text(f"{first.metrics['original_accuracy'] * 100:.1f}%")
    low, high = first.metrics["intervals"]["consistency"]
    expect(table).to_contain_text(f"[{low * 100:.1f}%, {high * 100:.1f}%]")
    expect(table).to_contain_text("not scored")
    expect(page.locator("#downloads a")).to_have_count(4)
    screenshot(page, "results-table")

    page.set_viewport_size({"width": 390, "height": 800})
    page.reload()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    title = page.locator("h1").bounding_box()
    assert title is not None and title["x"] + title["width"] <= 390
    screenshot(page, "results-table-phone")

    page.set_viewport_size({"width": 1280, "height": 900})
    page.click("#score-missing button")
    expect(page.locator(".messages")).to_contain_text("Queued 1 run.")
    queued = EvaluationRun.objects.get(release=second, model__name="lexicon")
    assert queued.status == "queued"
    expect(table).to_contain_text("running")
    expect(page.locator("#score-missing")).to_have_count(0)


def test_compare_runs_at_a_phones_width_keeps_its_chart_and_scrolls_its_table(
    page, login, project, released
):
    a, b = _scored(released, "keyword"), _scored(released, "lexicon")
    login("alice")
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(f"/p/{project.slug}/evaluations/compare/?a={a.pk}&b={b.pk}")
    expect(page.locator("#comparison")).to_contain_text("pp")
    chart = page.locator("#chart-compare").bounding_box()
    assert chart is not None and chart["height"] >= 200  # not a thin strip
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    box = page.locator("#comparison").locator("xpath=..")
    wide = box.evaluate("e => [e.scrollWidth, e.clientWidth, getComputedStyle(e).overflowX]")
    assert wide[0] > wide[1] and wide[2] == "auto"  # the table scrolls inside its card
    box.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
    last = page.locator("#comparison thead th").last.bounding_box()
    assert last is not None and last["x"] + last["width"] <= 390
    screenshot(page, "compare-phone")
