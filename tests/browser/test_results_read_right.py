"""Results that read right (issue 59): a run whose generated answers named no label says so on
Compare runs, with a link to those answers; macro F1 reads as a percentage, as accuracy does;
acc and acc_norm each say what they are; the Evaluation runs page's two forms say which is
which."""

import re

import pytest
from playwright.sync_api import expect

from annotation.releases.bundle import read_examples
from evaluation.models import EvaluationRun, ModelSpec, Prediction
from evaluation.runs.execute import run_evaluation
from evaluation.runs.served import label_named
from evaluation.runs.services import evaluation_enqueue
from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser

REFUSAL = "I would rather not say."


def _keyword_run(project, released, name: str = "rules"):  # type: ignore[no-untyped-def]
    spec = ModelSpec.objects.create(
        project=project, name=name, kind="python", source="tests.evaluation.rule_models:keyword"
    )
    run = evaluation_enqueue(release=released, model=spec, split="test", user=None, send=False)
    run_evaluation(run.pk)  # as the worker would
    run.refresh_from_db()
    return run


def _unparsed_run(project, released):  # type: ignore[no-untyped-def]
    """A served model's generation run whose every answer names no label (by the runs' own
    rule, served.label_named): each counts as wrong, so every figure is 0."""
    spec = ModelSpec.objects.create(project=project, name="chatty", kind="python",
                                    source="tests.evaluation.rule_models:keyword")  # fmt: skip
    examples = read_examples(released, "test")
    assert label_named(REFUSAL, {label: label for label in project.labels}) == ""
    originals = sum(e["role"] == "original" for e in examples)
    counts = {"originals": originals, "perturbed": len(examples) - originals,
              "sets": len({e["set_id"] for e in examples})}  # fmt: skip
    zero = dict.fromkeys(("original_accuracy", "perturbed_accuracy", "consistency"), 0.0)
    metrics = zero | {"drop": 0.0, "macro_f1": 0.0, "unparsed": len(examples), "counts": counts,
                      "per_tag": {}}  # fmt: skip
    run = EvaluationRun.objects.create(
        release=released, model=spec, split="test", status="succeeded", metrics=metrics,
        total=len(examples), done=len(examples),
    )  # fmt: skip
    Prediction.objects.bulk_create(
        Prediction(run=run, example=e["id"], set_id=e["set_id"], role=e["role"],
                   gold=e["label"], label="", output=REFUSAL)
        for e in examples
    )  # fmt: skip
    return run, len(examples)


def test_compare_runs_says_why_a_run_whose_answers_named_no_label_reads_zero(
    page, login, project, released
):
    plain = _keyword_run(project, released)
    silent, answers = _unparsed_run(project, released)
    login("alice")
    page.goto(f"/p/{project.slug}/evaluations/compare/?a={plain.pk}&b={silent.pk}")
    note = page.locator("#unparsed-notes")
    expect(note).to_contain_text(f"Run #{silent.pk} chatty: none of the {answers} answers named")
    expect(note).not_to_contain_text(f"Run #{plain.pk}")
    screenshot(page, "compare-unparsed")
    note.get_by_role("link", name="See its unparsed answers").click()
    page.wait_for_url(re.compile(rf"/evaluations/{silent.pk}/#unparsed$"))
    rows = page.locator("#unparsed-answers tbody tr")
    expect(rows).to_have_count(min(answers, 20))
    expect(rows.first).to_contain_text(REFUSAL)


def test_macro_f1_reads_as_a_percentage_on_the_run_page_as_on_compare_runs(
    page, login, project, released
):
    run = _keyword_run(project, released)
    other = _keyword_run(project, released, "rules-again")
    shown = f"{run.metrics['macro_f1'] * 100:.1f}%"
    login("alice")
    page.goto(f"/p/{project.slug}/evaluations/{run.pk}/")
    figure = page.locator("#results .figure", has_text="macro F1")
    expect(figure).to_have_text(f"{shown} macro F1")
    page.goto(f"/p/{project.slug}/evaluations/compare/?a={run.pk}&b={other.pk}")
    expect(page.locator("#comparison tr", has_text="Macro F1").locator("td").nth(1)).to_have_text(
        shown
    )
    page.goto(f"/p/{project.slug}/evaluations/")
    consistency = f"{run.metrics['consistency'] * 100:.1f}%"
    expect(page.locator(f"#runs tr:has(a:text-is('{run.pk}')) td").nth(6)).to_have_text(consistency)


def test_acc_and_acc_norm_each_say_what_they_are(page, login, project, released):
    run = _keyword_run(project, released)
    metrics = run.metrics | {"acc": 0.506, "acc_norm": 0.494}  # as a prompted model's run
    EvaluationRun.objects.filter(pk=run.pk).update(metrics=metrics)
    login("alice")
    page.goto(f"/p/{project.slug}/evaluations/{run.pk}/")
    for key, value in (("acc", "50.6%"), ("acc_norm", "49.4%")):
        figure = page.locator(f"#lm-eval-{key.replace('_', '-')}")
        expect(figure.locator("b")).to_have_text(value)
        expect(figure.locator("code")).to_have_text(key)
        said = " ".join(figure.inner_text().split())
        assert said.startswith(f"{value} {key}: "), said  # one figure, named, then explained
        assert "50.6%" not in said or "49.4%" not in said
    screenshot(page, "run-lm-eval-figures")


def test_the_two_forms_of_the_runs_page_each_say_what_they_do(page, login, project, released):
    _keyword_run(project, released)
    login("alice")
    page.goto(f"/p/{project.slug}/evaluations/")
    forms = (("#run-form", "Run a model"), ("#predictions-form", "Score a predictions file"))
    for form, heading in forms:
        expect(page.locator(form)).to_have_accessible_name(heading)
    ids = page.evaluate("Array.from(document.querySelectorAll('[id]')).map(e => e.id)")
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    for box in ("run-release", "run-split", "predictions-release", "predictions-split"):
        expect(page.locator(f"label[for={box}]")).to_have_count(1)
    screenshot(page, "runs-forms")
