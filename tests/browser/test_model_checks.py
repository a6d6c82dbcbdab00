"""The Models page and the run page say what is wrong with a model (issue 47): a mistyped hub
id is refused at once, and a sentence encoder registered as a classifier fails its run naming
the missing head, instead of "succeeded" with noise."""

import json

import pytest
from playwright.sync_api import expect

from evaluation.models import EvaluationRun
from evaluation.runs.execute import run_evaluation
from tests.browser.conftest import screenshot
from tests.evaluation.runs.test_random_weights import MINILM

pytestmark = pytest.mark.browser


def register(page, name: str, source: str, mapping: dict | None = None) -> None:  # type: ignore[type-arg]
    page.fill("input[name=name]", name)
    page.select_option("select[name=kind]", "hf-sequence-classification")
    page.fill("input[name=source]", source)
    if mapping:
        page.fill("[name=label_mapping]", json.dumps(mapping))
    page.click("form#model-form button[type=submit]")


def test_a_headless_encoder_fails_its_run_on_the_page_naming_the_missing_head(
    page, login, project, released, staff, settings, monkeypatch, tmp_path
):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))  # empty
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    settings.MODELS_DIR = MINILM.parent
    login("root")
    page.goto(f"/p/{project.slug}/models/")
    register(page, "typo", "org/sentimnet-model")
    expect(page.locator("#model-form")).to_contain_text(
        "'org/sentimnet-model' is not in this machine's Hugging Face cache"
    )
    screenshot(page, "model-source-refused")
    page.goto(f"/p/{project.slug}/models/")
    register(page, "minilm", "model", {"LABEL_0": "negative", "LABEL_1": "positive"})
    expect(page.locator("#models")).to_contain_text("minilm")
    page.goto(f"/p/{project.slug}/evaluations/")
    page.select_option("select[name=model]", label="minilm")
    page.click("form#run-form button[type=submit]")
    run = EvaluationRun.objects.get(model__name="minilm")
    run_evaluation(run.pk)  # as the worker would
    page.goto(f"/p/{project.slug}/evaluations/{run.pk}/")
    expect(page.locator("#run-status")).to_have_text("failed")
    expect(page.locator("#run-error")).to_contain_text("The model has no classification head")
    expect(page.locator("#run-error")).to_contain_text("classifier.weight")
    screenshot(page, "run-without-head")
