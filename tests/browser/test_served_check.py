"""A served model from the pages (docs/models.md): registered on the Models page, its Check says
what the server gets right (here llama-cpp-python's server, whose echo is shifted by a token
for a model without BOS), and its run page says how its log-likelihoods were read."""

import re

import pytest
from playwright.sync_api import expect

from evaluation.models import EvaluationRun
from evaluation.runs.execute import run_evaluation
from tests.browser.conftest import screenshot
from tests.evaluation.llm import bpe_tokenizer
from tests.evaluation.served import LlamaServer, write_gguf

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def shifted(tmp_path_factory):  # type: ignore[no-untyped-def]
    tokenizer = bpe_tokenizer(add_bos=False, words=("negative", "positive"))
    model = write_gguf(tmp_path_factory.mktemp("gguf") / "m.gguf", tokenizer, add_bos=False,
                       chosen=("Ġnegative", "Ġpositive"))  # fmt: skip
    server = LlamaServer(model).start()
    yield server
    server.stop()


def test_the_check_and_the_run_page_say_how_a_served_model_is_read(
    page, login, project, people, released, shifted
):
    people["admin"].is_staff = True  # staff may name a server on this machine
    people["admin"].save()
    login("alice")
    page.goto(f"/p/{project.slug}/models/")
    page.fill("input[name=name]", "served")
    page.select_option("select[name=kind]", "openai-compatible")
    page.fill("input[name=source]", shifted.alias)
    page.fill("input[name=base_url]", f"{shifted.url}/v1")
    page.click("form#model-form button[type=submit]")
    expect(page.locator("#models")).to_contain_text("served")
    page.locator("#models button", has_text="Check").click()
    messages = page.locator(".messages")
    expect(messages).to_contain_text("Check of served: ready to score.")
    expect(messages).to_contain_text("shifted by one token")
    screenshot(page, "served-check")

    page.goto(f"/p/{project.slug}/evaluations/")
    page.select_option("select[name=model]", label="served")
    page.click("form#run-form button[type=submit]")
    run = EvaluationRun.objects.get(model__name="served")
    run_evaluation(run.pk)  # as the worker would
    page.goto(f"/p/{project.slug}/evaluations/{run.pk}/")
    expect(page.locator("#run-status")).to_have_text("succeeded")
    reading = page.locator("#server-reading")
    expect(reading).to_contain_text(re.compile(r"likeliest next tokens .*\(\d+ distinct"))
    expect(reading).to_contain_text("one request per example")
    screenshot(page, "served-run")


def test_a_sharded_served_runs_page_says_how_it_was_read_and_what_it_asked(
    page, login, project, released, shifted
):
    """Each shard keeps its Check's reading and tokens, so the merged run's page says what a
    run in one piece says."""
    from evaluation.models import ModelSpec
    from evaluation.runs.execute import run_shard
    from evaluation.runs.services import evaluation_enqueue

    spec = ModelSpec.objects.create(project=project, name="served", kind="openai-compatible",
                                    source=shifted.alias, base_url=f"{shifted.url}/v1")  # fmt: skip
    run = evaluation_enqueue(release=released, model=spec, split="test", user=None, shards=2)
    for shard in run.shard_jobs.all():
        assert run_shard(shard.pk).status == "succeeded"
    run_evaluation(run.pk)
    login("alice")
    page.goto(f"/p/{project.slug}/evaluations/{run.pk}/")
    expect(page.locator("#run-status")).to_have_text("succeeded")
    expect(page.locator("#server-reading")).to_contain_text("one request per example")
    run.refresh_from_db()
    requests = run.metrics["usage"]["requests"]
    expect(page.locator("#usage")).to_contain_text(f"answered {requests} requests")
    screenshot(page, "served-sharded-run")
