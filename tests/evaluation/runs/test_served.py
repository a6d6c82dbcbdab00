"""Served models (docs/models.md) against a real OpenAI-compatible server: llama-cpp-python's,
serving a tiny random Llama written here as GGUF. The run's log-likelihoods are the model's
own forward pass (llama-cpp-python's Python API on the same file); a server that restarts
mid-run costs no answered request twice; the API key is nowhere to be read."""

import json
import logging
import re
import socket
import threading
import zipfile
from pathlib import Path

import pytest
from django.test import Client

from annotation.models import Perturbation
from annotation.releases.bundle import read_examples
from evaluation.models import ModelSpec, ServedAnswer
from evaluation.runs.execute import run_evaluation
from evaluation.runs.services import evaluation_retry
from tests.evaluation.runs.conftest import PROMPT
from tests.evaluation.served import CountingProxy, LlamaServer, write_gguf
from tests.factories import ExampleFactory, member, submitted_perturbation
from tests.oracles.consistency import consistency
from tests.oracles.llama_forward import ForwardPass
from tests.oracles.squad import best_exact_match, best_f1

KEY = "sk-live-7f3a9c-DO-NOT-SHOW"


@pytest.fixture(scope="module")
def llama(tmp_path_factory):  # type: ignore[no-untyped-def]
    server = LlamaServer(write_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf")).start()
    yield server
    server.stop()


@pytest.fixture
def proxy(llama):  # type: ignore[no-untyped-def]
    front = CountingProxy(llama.url)
    yield front
    front.close()


@pytest.fixture(autouse=True)
def quick_retries(settings):  # type: ignore[no-untyped-def]
    settings.SERVED_MODEL_RETRIES = 30
    settings.SERVED_MODEL_BACKOFF_MAX = 0.5


def register(root, project, url, **extra):  # type: ignore[no-untyped-def]
    payload = {"project": project.slug, "name": extra.pop("name", "served"),
               "kind": "openai-compatible", "source": "tiny-llama", "base_url": f"{url}/v1",
               "api_key": KEY, "concurrency": 3, **extra}  # fmt: skip
    created = root.post("/api/models/", payload, format="json")
    assert created.status_code == 201, created.json()
    return created.json()


def start(root, release, model):  # type: ignore[no-untyped-def]
    run = root.post("/api/evaluations/", {"release": release, "model": model, "split": "test"},
                    format="json")  # fmt: skip
    assert run.status_code == 202, run.json()
    return run.json()["id"]


def test_a_served_run_equals_the_models_forward_pass_and_counts_what_it_asked(
    sentiment, llama, proxy, staff
):
    """The model's own forward pass is the reference (tests/oracles/llama_forward.py), not
    another client: lm-evaluation-harness's `gguf` backend reads the echo by position from the
    end, and differs from it here."""
    project, release, root = sentiment
    spec = register(root, project, proxy.url, price_prompt=0.5, price_completion=2.0)
    run = run_evaluation(start(root, release, spec["id"]))
    assert run.status == "succeeded", run.error
    oracle = ForwardPass(llama.model)
    words = {"negative": " negative", "positive": " great"}  # the fixture's verbalizer
    prompts = {e["id"]: PROMPT.format(text=e["fields"]["text"])
               for e in read_examples(run.release, "test")}  # fmt: skip
    predictions = list(run.predictions.all())
    assert sorted(p.example for p in predictions) == sorted(prompts)
    for p in predictions:
        expected = {label: oracle.loglikelihood(prompts[p.example], word)
                    for label, word in words.items()}  # fmt: skip
        assert p.loglikelihoods == pytest.approx(expected, abs=1e-4)
        assert p.label == max(expected, key=expected.__getitem__)
    right = [p.label == p.gold for p in predictions]
    assert run.metrics["acc"] == pytest.approx(sum(right) / len(right))
    assert run.metrics["consistency"] == pytest.approx(
        consistency([(p.set_id, p.label == p.gold) for p in predictions])
    )
    # Each example's prompt with each label asked once; every request the run made (the
    # Check's canaries too) counted, with the tokens the server said it used.
    for prompt in prompts.values():
        for word in words.values():
            assert proxy.answered[json.dumps(prompt + word)] == 1
    usage = run.metrics["usage"]
    assert usage["requests"] == sum(proxy.answered.values())
    assert usage["prompt_tokens"] == proxy.usage["prompt_tokens"] > 0
    assert usage["completion_tokens"] == proxy.usage["completion_tokens"] > 0
    expected = (usage["prompt_tokens"] * 0.5 + usage["completion_tokens"] * 2.0) / 1e6
    assert usage["cost"] == pytest.approx(expected, abs=1e-6)  # kept to a millionth
    browser = Client()
    browser.force_login(staff)
    page = browser.get(f"/p/{project.slug}/evaluations/{run.pk}/").content.decode()
    said = f"{usage['prompt_tokens']} prompt tokens and {usage['completion_tokens']} completion"
    assert said in page and f"costing {usage['cost']:.4f}" in page


def scoring_requests(proxy, run):  # type: ignore[no-untyped-def]
    """How often the proxy was asked for each prompt of the run's examples with each label
    (the Check's canaries left out), by the fixture's own template and verbalizer."""
    prompts = [PROMPT.format(text=e["fields"]["text"]) for e in read_examples(run.release, "test")]
    asked = {json.dumps(p + word) for p in prompts for word in (" negative", " great")}
    return {prompt: n for prompt, n in proxy.answered.items() if prompt in asked}


def test_the_server_restarting_mid_run_costs_no_answer_twice(sentiment, llama, proxy):
    project, release, root = sentiment
    spec = register(root, project, proxy.url, concurrency=2)
    restarted = threading.Event()

    def outage(front):  # type: ignore[no-untyped-def]
        if sum(front.answered.values()) == 4 and not restarted.is_set():
            restarted.set()  # the real server, killed and started again on its port
            threading.Thread(target=lambda: (llama.stop(), llama.start())).start()

    proxy.on_answer = outage
    run = run_evaluation(start(root, release, spec["id"]))
    assert restarted.is_set() and run.status == "succeeded", run.error
    asked = scoring_requests(proxy, run)
    assert set(asked.values()) == {1} and len(asked) == 2 * run.predictions.count()
    assert ServedAnswer.objects.filter(run=run).count() == len(asked)


def test_a_failed_run_retried_asks_only_what_was_not_answered(sentiment, proxy, settings):
    project, release, root = sentiment
    settings.SERVED_MODEL_RETRIES = 1
    spec = register(root, project, proxy.url, concurrency=1)

    def down_after_three(front):  # type: ignore[no-untyped-def]
        reviews = [n for p, n in front.answered.items() if json.loads(p).startswith("Review:")]
        if sum(reviews) >= 3:  # the fixture's prompts, not the Check's canaries
            front.down.set()

    proxy.on_answer = down_after_three
    failed = run_evaluation(start(root, release, spec["id"]))
    assert failed.status == "failed" and "answers so far are kept" in failed.error
    assert ServedAnswer.objects.filter(run=failed).count() == 3 and proxy.refused >= 2
    proxy.on_answer = None
    proxy.down.clear()
    kept = scoring_requests(proxy, failed)
    assert sum(kept.values()) == 3
    evaluation_retry(run=failed)
    run = run_evaluation(failed.pk)
    assert run.status == "succeeded", run.error
    # The kept answers are not asked again (a request whose answer a dropped connection lost
    # may be; the transport retries it).
    asked = scoring_requests(proxy, run)
    assert {prompt: asked[prompt] for prompt in kept} == kept
    assert len(asked) == 2 * run.predictions.count()


def test_a_server_that_stops_answering_is_said_on_the_run_page_as_it_happens(
    sentiment, proxy, staff
):
    """Issue 59: with the server gone mid-run, the page kept "running · 302 of 976" and a stale
    rate, and the finished run did not mention the outage."""
    project, release, root = sentiment
    spec = register(root, project, proxy.url, concurrency=1)
    run_id = start(root, release, spec["id"])
    browser = Client()
    browser.force_login(staff)
    progress = f"/p/{project.slug}/evaluations/{run_id}/progress/"
    seen: list[str] = []

    def down_after_three(front):  # type: ignore[no-untyped-def]
        reviews = [n for p, n in front.answered.items() if json.loads(p).startswith("Review:")]
        if sum(reviews) >= 3 and not seen:  # the fixture's prompts, not the Check's canaries
            front.down.set()

    def watch(done: int, total: int) -> None:  # the worker's heartbeat, about every second
        page = browser.get(progress).content.decode()
        if proxy.down.is_set() and 'id="run-notice"' in page:
            seen.append(page)
            proxy.down.clear()  # the server is back

    proxy.on_answer = down_after_three
    run = run_evaluation(run_id, progress=watch)
    assert run.status == "succeeded", run.error
    said = re.search(r'<p class="warning" role="status" id="run-notice">([^<]*)</p>', seen[0])
    assert said, seen[0]
    assert re.fullmatch(
        r"The server is not answering \(the connection failed\) for \d+ s: retrying, "
        r"try \d+ of 31 in \d+ s\.",
        said[1],
    ), said[1]
    assert "examples/s" not in seen[0]  # no rate from before the outage
    assert proxy.refused >= 1
    assert re.fullmatch(
        r"The server stopped answering once, \d+ s in all \(last: the connection failed\); "
        r"\d+ requests were sent again\.",
        run.notice,
    ), run.notice
    page = browser.get(f"/p/{project.slug}/evaluations/{run.pk}/").content.decode()
    assert f'<p class="muted" id="run-notice">{run.notice}</p>' in page
    assert root.get(f"/api/evaluations/{run.pk}/").json()["notice"] == run.notice


def test_the_api_key_is_sent_to_the_server_and_shown_nowhere(
    sentiment, proxy, caplog, tmp_path, staff
):
    project, release, root = sentiment
    caplog.set_level(logging.DEBUG)
    spec = register(root, project, proxy.url)
    assert spec["has_api_key"] is True and KEY not in json.dumps(spec)
    run = run_evaluation(start(root, release, spec["id"]))
    assert run.status == "succeeded", run.error
    assert proxy.keys == {f"Bearer {KEY}"}
    browser = Client()
    browser.force_login(staff)
    seen = [
        root.get("/api/models/").content, root.get(f"/api/evaluations/{run.pk}/").content,
        browser.get(f"/p/{project.slug}/models/").content,
        browser.get(f"/p/{project.slug}/evaluations/{run.pk}/").content,
        browser.get(f"/p/{project.slug}/evaluations/").content,
        browser.get(f"/p/{project.slug}/audit/").content,
        caplog.text.encode(),
    ]  # fmt: skip
    for content in seen:
        assert KEY.encode() not in content
    stored = ModelSpec.objects.get(pk=spec["id"])
    assert KEY not in stored.api_key_encrypted and stored.api_key_encrypted
    with zipfile.ZipFile(Path(_unzip_root()) / run.release.bundle) as bundle:
        for name in bundle.namelist():
            assert KEY.encode() not in bundle.read(name)


def _unzip_root() -> str:
    from django.conf import settings

    return str(settings.MEDIA_ROOT)


def test_labels_by_generation_count_the_answers_that_name_none(sentiment, proxy):
    project, release, root = sentiment
    spec = register(root, project, proxy.url, scoring="generation", max_new_tokens=4)
    run = run_evaluation(start(root, release, spec["id"]))
    assert run.status == "succeeded", run.error
    words = {"negative": "negative", "positive": "great"}  # the project's verbalizer
    unparsed = 0
    for p in run.predictions.all():
        said = p.output.strip().split("\n")[0].strip(" .,!\"'").lower()
        named = [label for label, word in words.items() if said in (label, word)]
        if not named:
            named = [label for label, word in words.items()
                     if re.match(rf"({label}|{word})\b", said)]  # fmt: skip
        assert p.label == (named[0] if len(named) == 1 else "")
        unparsed += p.label == ""
    assert run.metrics["unparsed"] == unparsed
    # The download carries each answer's text beside the label read from it.
    lines = root.get(f"/api/evaluations/{run.pk}/predictions/?format=jsonl").getvalue()
    rows = [json.loads(line) for line in lines.decode().splitlines()]
    by_id = {(p.example, p.role): p for p in run.predictions.all()}
    assert len(rows) == len(by_id)
    for row in rows:
        p = by_id[row["example_id"], row["role"]]
        assert (row["output"], row["prediction"]) == (p.output, p.label)


@pytest.mark.parametrize(
    ("text", "label"),
    [("Positive.", "positive"), (" great, really", "positive"), ("negative\nmore", "negative"),
     ("not positive", ""), ("positively", ""), ("", ""), ("positive or negative", "positive"),
     ("'Negative'", "negative"), ("GREAT!", "positive")],
)  # fmt: skip
def test_a_generated_answer_names_a_label_by_the_documented_rule(text, label):
    from evaluation.runs.served import label_named

    assert label_named(text, {"negative": "negative", "positive": "great"}) == label


@pytest.mark.parametrize(
    ("url", "problem"),
    [("http://127.0.0.1:8000/v1", "internal address"), ("http://10.1.2.3/v1", "internal"),
     ("http://[::ffff:127.0.0.1]:80/v1", "internal"), ("http://169.254.169.254/v1", "internal"),
     ("file:///etc/passwd", "http(s) address"), ("http://u:p@example.org/v1", "api_key"),
     ("http://localhost:9/v1", "internal")],
)  # fmt: skip
def test_an_admin_who_is_not_staff_names_no_internal_host(sentiment, client_for, url, problem):
    project, _, _ = sentiment
    admin = member(project, "adm", "admin")
    answer = client_for(admin).post("/api/models/", {
        "project": project.slug, "name": "m", "kind": "openai-compatible",
        "source": "m", "base_url": url}, format="json")  # fmt: skip
    assert answer.status_code in (400, 403) and problem in json.dumps(answer.json())
    assert not ModelSpec.objects.filter(name="m").exists()


def test_the_operator_allows_a_host_and_the_worker_checks_it_again(
    sentiment, client_for, proxy, settings
):
    project, release, root = sentiment
    admin = member(project, "adm", "admin")
    settings.SERVED_MODEL_HOSTS = ["127.0.0.1"]
    created = client_for(admin).post("/api/models/", {
        "project": project.slug, "name": "m", "kind": "openai-compatible",
        "source": "tiny-llama", "base_url": f"{proxy.url}/v1"}, format="json")  # fmt: skip
    assert created.status_code == 201, created.json()
    settings.SERVED_MODEL_HOSTS = ["*"]  # the operator took it back before the run
    run = run_evaluation(start(root, release, created.json()["id"]))
    assert run.status == "failed" and "internal address" in run.error
    assert not proxy.answered


def test_a_chat_endpoint_is_not_asked_for_log_likelihoods(sentiment):
    project, _, root = sentiment
    answer = root.post("/api/models/", {
        "project": project.slug, "name": "chat", "kind": "openai-compatible", "source": "m",
        "base_url": "http://127.0.0.1:1/v1", "chat_template": True}, format="json")  # fmt: skip
    assert answer.status_code == 400 and "scoring" in json.dumps(answer.json())


def test_free_text_is_generated_through_chat_and_scored_by_the_answer_rules(questions, proxy):
    """A free-text project answered through chat completions; EM and F1 recomputed here."""
    project, release, root = questions
    spec = register(root, project, proxy.url, scoring="generation", chat_template=True,
                    max_new_tokens=5)  # fmt: skip
    run = run_evaluation(start(root, release, spec["id"]))
    assert run.status == "succeeded", run.error
    asked = [json.loads(key) for key in proxy.answered]
    assert asked and all(message[0]["role"] == "user" for message in asked)
    members = []
    for p in run.predictions.all():
        f1 = best_f1(p.output, p.gold_answers)
        assert (p.em, p.f1) == (best_exact_match(p.output, p.gold_answers), pytest.approx(f1))
        members.append((p.set_id, f1 > 0.8))
    assert run.metrics["consistency"] == pytest.approx(consistency(members))
    # One request per example, and the Check's one canary of the same endpoint before them.
    assert run.metrics["usage"]["requests"] == run.predictions.count() + 1 == len(asked)


def test_the_models_page_registers_a_served_model_and_never_shows_its_key(sentiment, staff, proxy):
    project, _, _ = sentiment
    browser = Client()
    browser.force_login(staff)
    form = {"name": "served-page", "kind": "openai-compatible", "source": "tiny-llama",
            "base_url": f"{proxy.url}/v1/", "api_key": KEY, "scoring": "generation",
            "concurrency": 8, "timeout": 30, "max_length": 256, "batch_size": 32,
            "device": "auto", "precision": "fp32", "target_delimiter": " ", "few_shot": 0,
            "stop": "\\n", "num_beams": 1, "max_new_tokens": 8, "stride": 128,
            "max_answer_tokens": 30, "label_mapping": "", "verbalizers": ""}  # fmt: skip
    done = browser.post(f"/p/{project.slug}/models/", form, follow=True)
    html = done.content.decode()
    assert "Model served-page registered" in html, html[-3000:]
    spec = ModelSpec.objects.get(name="served-page")
    assert (spec.base_url, spec.concurrency, spec.scoring) == (f"{proxy.url}/v1", 8,
                                                                "generation")  # fmt: skip
    assert "key set" in html and KEY not in html and KEY not in spec.api_key_encrypted
    # The key field is never filled back in, even when the form comes back with an error.
    again = browser.post(f"/p/{project.slug}/models/", form).content.decode()
    assert "exists in this project" in again and KEY not in again


def test_a_server_that_does_not_answer_or_serve_the_name_is_refused_at_registration(
    sentiment, proxy
):
    """Told within seconds, not minutes into a run that retries a refused connection."""
    project, _, root = sentiment
    with socket.socket() as closed:  # a port of this machine that nothing listens on
        closed.bind(("127.0.0.1", 0))
        nobody = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    payload = {"project": project.slug, "name": "m", "kind": "openai-compatible",
               "source": "tiny-llama", "base_url": nobody}  # fmt: skip
    refused = root.post("/api/models/", payload, format="json")
    assert refused.status_code == 400 and "did not answer" in refused.json()["detail"]
    misnamed = {**payload, "base_url": f"{proxy.url}/v1", "source": "tiny-lama"}
    refused = root.post("/api/models/", misnamed, format="json")
    assert refused.status_code == 400, refused.json()
    assert "serves tiny-llama, not 'tiny-lama'" in refused.json()["detail"]
    assert not ModelSpec.objects.filter(name="m").exists()
    assert root.post("/api/models/", {**misnamed, "source": "tiny-llama"},
                     format="json").status_code == 201  # fmt: skip


def test_a_later_release_asks_the_server_only_for_its_new_sets(sentiment, proxy):
    """Release 2 adds a set to release 1: its run reuses release 1's answers and asks only for
    the new set's prompts, with the figures of a run that asks everything again."""
    project, release, root = sentiment
    spec = register(root, project, proxy.url)
    first = run_evaluation(start(root, release, spec["id"]))
    assert first.status == "succeeded", first.error
    old = {e["id"] for e in read_examples(first.release, "test")}
    author = project.memberships.get(user__username="ana").user
    pivot = ExampleFactory(project=project, external_id="r9", label="positive",
                           fields={"text": "a great film"}, split="test")  # fmt: skip
    added = submitted_perturbation(project, author, pivot=pivot, text="a bad film")
    Perturbation.objects.filter(pk=added.pk).update(status="accepted")
    second = root.post(f"/api/projects/{project.slug}/releases/", {"version": "2"}, format="json")
    assert second.status_code == 201, second.json()
    proxy.answered.clear()
    again = run_evaluation(start(root, second.json()["id"], spec["id"]))
    assert again.status == "succeeded", again.error
    examples = read_examples(again.release, "test")
    new = [e for e in examples if e["id"] not in old]
    assert len(new) == 2  # the new original and its perturbation
    asked = {
        json.loads(p): n for p, n in proxy.answered.items() if json.loads(p).startswith("Review:")
    }
    expected = {PROMPT.format(text=e["fields"]["text"]) + word
                for e in new for word in (" negative", " great")}  # fmt: skip
    assert asked == dict.fromkeys(expected, 1)
    assert again.metrics["usage"]["reused"] == 2 * (len(examples) - len(new))
    fresh = root.post("/api/evaluations/", {"release": second.json()["id"], "model": spec["id"],
                      "split": "test", "reuse_answers": False}, format="json")  # fmt: skip
    assert fresh.status_code == 202, fresh.json()
    scratch = run_evaluation(fresh.json()["id"])
    assert scratch.status == "succeeded" and scratch.metrics["usage"]["reused"] == 0
    drop = ("usage", "examples_per_second")
    assert {k: v for k, v in again.metrics.items() if k not in drop} == {
        k: v for k, v in scratch.metrics.items() if k not in drop
    }


def test_a_base_url_without_v1_is_refused_with_the_hint(sentiment, proxy):
    """llama-cpp-python, vLLM and the API providers list their models at /v1/models."""
    project, _, root = sentiment
    answer = root.post("/api/models/", {
        "project": project.slug, "name": "m", "kind": "openai-compatible",
        "source": "tiny-llama", "base_url": proxy.url}, format="json")  # fmt: skip
    assert answer.status_code == 400 and answer.json()["field"] == "base_url"
    assert "up to /v1" in answer.json()["detail"]
