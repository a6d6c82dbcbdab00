"""A prompted language model from the pages alone (docs/prompting.md): set the project's prompt
and verbalizers, see examples through it, register a causal LM, run it, download predictions."""

import json
import re

import pytest
from playwright.sync_api import expect

from evaluation.models import EvaluationRun
from evaluation.runs.execute import run_evaluation
from tests.browser.conftest import screenshot
from tests.evaluation.llm import build_causal

pytestmark = pytest.mark.browser


def test_an_admin_scores_a_release_with_a_prompted_causal_lm(
    page, login, project, people, released, tmp_path_factory
):
    model = build_causal(tmp_path_factory.getbasetemp() / "browser-llm")
    people["admin"].is_staff = True  # staff may load a model from the workers' disk
    people["admin"].save()
    login("alice")
    page.goto(f"/p/{project.slug}/models/prompt/")
    page.fill("textarea[name=prompt]", "Review: {txt}\nSentiment:")
    page.get_by_label("Words for positive").fill("great")
    page.keyboard.press("Enter")  # in a text input, Enter submits
    expect(page.locator("form#prompt-form")).to_contain_text("{txt}, which are not fields")
    page.fill("textarea[name=prompt]", "Review: {text}\nSentiment:")
    page.click("form#prompt-form button[type=submit]")
    expect(page.locator(".messages")).to_contain_text("Prompt saved.")
    expect(page.locator("pre.prompt-preview").first).to_have_text(
        "Review: the film was good\nSentiment:"
    )
    expect(page.locator("p.choices").first).to_have_text(
        "Choices, each scored after it:  great (positive) ·  negative (negative)"
    )
    screenshot(page, "llm-prompt")

    page.goto(f"/p/{project.slug}/models/")
    page.fill("input[name=name]", "tiny-gpt")
    page.select_option("select[name=kind]", "hf-causal-lm")
    page.fill("input[name=source]", str(model))
    page.fill("input[name=batch_size]", "4")
    page.click("form#model-form button[type=submit]")
    expect(page.locator("#models")).to_contain_text("tiny-gpt")

    page.goto(f"/p/{project.slug}/evaluations/")
    page.select_option("select[name=model]", label="tiny-gpt")
    page.click("form#run-form button[type=submit]")
    run = EvaluationRun.objects.get(model__name="tiny-gpt")
    run_evaluation(run.pk)  # as the worker would
    page.goto(f"/p/{project.slug}/evaluations/{run.pk}/")
    expect(page.locator("#run-status")).to_have_text("succeeded")
    expect(page.locator("#results")).to_contain_text("consistency (6 sets)")
    run.refresh_from_db()
    figures = page.locator("#lm-eval-figures").inner_text()
    shown = " ".join(figures.split())
    for name in ("acc", "acc_norm"):  # the harness's headline figures, as the run stored them
        value = re.escape(f"{run.metrics[name] * 100:.1f}%")
        assert re.search(rf"{value} {name}(?![_\w])", shown), shown
    screenshot(page, "llm-run")
    with page.expect_download() as download:
        page.locator("#downloads a", has_text="JSON Lines").click()
    with open(download.value.path(), encoding="utf-8") as file:
        lines = [json.loads(line) for line in file]
    run.refresh_from_db()
    assert len(lines) == run.total == 13
    assert all(set(line["loglikelihoods"]) == {"negative", "positive"} for line in lines)
    assert {line["example_id"] for line in lines} == set(
        run.predictions.values_list("example", flat=True)
    )
