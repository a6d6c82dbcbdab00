"""Served log-likelihoods against the model's own forward pass (tests/oracles/llama_forward.py:
llama-cpp-python's Python API on the same GGUF), through a real llama-cpp-python server, on
every reading path (docs/models.md):

- a model that adds a BOS: the server's echo is right, and multi-token labels are read from it;
- a model that adds none: the server's echo is shifted by a token (each value read from the
  logits after its token); one-token labels are read from the next token's top list, one
  request per example, and labels of several tokens from the top lists of the echo;
- a label outside the top list: read from the echo where it is right, else a refusal that
  says why; a server without prompt log-probabilities: told apart by the Check, and refused
  at run start with the reason.
"""

import json

import pytest

from annotation.releases.bundle import read_examples
from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runs.execute import run_evaluation
from tests.evaluation.llm import bpe_tokenizer
from tests.evaluation.runs.conftest import PROMPT
from tests.evaluation.runs.test_served import register, start
from tests.evaluation.served import CountingProxy, LlamaServer, write_gguf
from tests.oracles.llama_forward import ForwardPass

WORDS = ("negative", "positive")  # one token each, after a space, in these tests' vocabulary
SINGLE = {"negative": "negative", "positive": "positive"}
SEVERAL = {"negative": "awful", "positive": "great"}  # " awful": 5 tokens, " great": 3
CHOSEN_SINGLE = ("Ġnegative", "Ġpositive")
CHOSEN_SEVERAL = ("Ġa", "w", "f", "u", "l", "Ġg", "re", "at")
TOP = 20  # what the product asks for (vLLM's default cap), stated here for the test's own rule


def serve(tmp_path_factory, name, **model):  # type: ignore[no-untyped-def]
    tokenizer = bpe_tokenizer(add_bos=False, words=WORDS)
    path = write_gguf(tmp_path_factory.mktemp(name) / f"{name}.gguf", tokenizer, **model)
    return path, LlamaServer(path).start()


@pytest.fixture(scope="module")
def shifted(tmp_path_factory):  # type: ignore[no-untyped-def]
    """No BOS; the labels' tokens rank first after any text."""
    path, server = serve(
        tmp_path_factory, "shifted", add_bos=False, chosen=CHOSEN_SINGLE + CHOSEN_SEVERAL
    )
    yield path, server
    server.stop()


@pytest.fixture(scope="module")
def aligned(tmp_path_factory):  # type: ignore[no-untyped-def]
    """A BOS; only " negative" ranks first."""
    path, server = serve(tmp_path_factory, "aligned", add_bos=True, chosen=("Ġnegative",))
    yield path, server
    server.stop()


@pytest.fixture(scope="module")
def plain(tmp_path_factory):  # type: ignore[no-untyped-def]
    """No BOS, random weights: no label ranks first."""
    path, server = serve(tmp_path_factory, "plain", add_bos=False)
    yield path, server
    server.stop()


@pytest.fixture
def counted(request):  # type: ignore[no-untyped-def]
    proxies = []

    def front(server):  # type: ignore[no-untyped-def]
        proxies.append(CountingProxy(server.url))
        return proxies[-1]

    yield front
    for proxy in proxies:
        proxy.close()


def scored(sentiment, proxy, verbalizers):  # type: ignore[no-untyped-def]
    project, release, root = sentiment
    spec = register(root, project, proxy.url, verbalizers=verbalizers)
    return EvaluationRun.objects.get(pk=start(root, release, spec["id"]))


def contexts(run):  # type: ignore[no-untyped-def]
    """Each example's prompt by the fixture's own template."""
    return {
        e["id"]: PROMPT.format(text=e["fields"]["text"])
        for e in read_examples(run.release, run.split)
    }


def assert_forward_pass(run, model, words):  # type: ignore[no-untyped-def]
    oracle = ForwardPass(model)
    prompts = contexts(run)
    predictions = list(run.predictions.all())
    assert len(predictions) == len(prompts) > 0
    for p in predictions:
        expected = {
            label: oracle.loglikelihood(prompts[p.example], " " + word)
            for label, word in words.items()
        }
        assert p.loglikelihoods == pytest.approx(expected, abs=1e-4), p.example
        assert p.label == max(expected, key=expected.__getitem__)


def test_one_token_labels_on_a_shifted_echo_are_read_from_the_top_list_one_request_each(
    sentiment, shifted, counted
):
    model, server = shifted
    proxy = counted(server)
    run = run_evaluation(scored(sentiment, proxy, SINGLE).pk)
    assert run.status == "succeeded", run.error
    assert_forward_pass(run, model, SINGLE)
    assert run.metrics["server"]["echo"] == "shifted"
    assert run.metrics["server"]["path"] == "next"
    # One request per example (each prompt alone), beside the labels' two tokenising echoes.
    prompts = set(contexts(run).values())
    asked = {json.loads(prompt): n for prompt, n in proxy.answered.items()}
    assert {prompt: asked.get(prompt) for prompt in prompts} == dict.fromkeys(prompts, 1)


def test_labels_of_several_tokens_on_a_shifted_echo_equal_the_forward_pass(
    sentiment, shifted, counted
):
    model, server = shifted
    run = run_evaluation(scored(sentiment, counted(server), SEVERAL).pk)
    assert run.status == "succeeded", run.error
    assert run.metrics["server"]["path"] == "echo-shifted"
    assert_forward_pass(run, model, SEVERAL)


def test_labels_of_several_tokens_on_a_right_echo_equal_the_forward_pass(
    sentiment, aligned, counted
):
    model, server = aligned
    run = run_evaluation(scored(sentiment, counted(server), SEVERAL).pk)
    assert run.status == "succeeded", run.error
    assert run.metrics["server"]["echo"] == "aligned"
    assert run.metrics["server"]["path"] == "echo"
    assert_forward_pass(run, model, SEVERAL)


def test_a_label_outside_the_top_list_falls_back_to_a_right_echo(sentiment, aligned, counted):
    model, server = aligned
    run = run_evaluation(scored(sentiment, counted(server), SINGLE).pk)
    assert run.status == "succeeded", run.error
    oracle = ForwardPass(model)
    outside = [
        prompt for prompt in contexts(run).values() if oracle.rank(prompt, " positive") >= TOP
    ]
    assert outside, "the test needs prompts after which ' positive' ranks outside the top list"
    assert run.metrics["server"]["path"] == "next"
    assert run.metrics["server"]["fallback"] == len(outside)
    assert_forward_pass(run, model, SINGLE)


def test_a_label_outside_the_top_list_on_a_shifted_echo_is_refused_with_the_reason(
    sentiment, plain, counted
):
    model, server = plain
    run = scored(sentiment, counted(server), SINGLE)
    oracle = ForwardPass(model)
    ranks = [oracle.rank(prompt, " " + w) for prompt in contexts(run).values() for w in WORDS]
    assert max(ranks) >= TOP, "the test needs a label outside the top list"
    run = run_evaluation(run.pk)
    assert run.status == "failed"
    assert "is not among the" in run.error and "shifted" in run.error, run.error


def test_a_server_without_prompt_log_probabilities_is_told_apart_at_check_and_at_run_start(
    sentiment, tmp_path
):
    project, release, root = sentiment
    model = write_gguf(tmp_path / "m.gguf", bpe_tokenizer(add_bos=False, words=WORDS))
    server = LlamaServer(model, logits_all=False).start()
    try:
        spec = register(root, project, server.url, verbalizers=SINGLE)
        check = root.post(f"/api/models/{spec['id']}/check/")
        assert check.status_code == 200, check.json()
        assert check.json()["ok"] is False
        assert "logits_all" in " ".join(check.json()["problems"])
        run = run_evaluation(start(root, release, spec["id"]))
        assert run.status == "failed" and "logits_all" in run.error, run.error
    finally:
        server.stop()


def test_the_check_tells_a_shifted_echo_from_a_right_one(sentiment, shifted, aligned):
    project, _, root = sentiment
    for name, (_, server), echo in (("s", shifted, "shifted"), ("a", aligned, "aligned")):
        spec = register(root, project, server.url, name=name)
        answer = root.post(f"/api/models/{spec['id']}/check/").json()
        assert answer["ok"] is True and answer["echo"] == echo, answer
        assert answer["lists_source"] is True and answer["repeatable"] is True
        assert ("shifted by one token" in " ".join(answer["notes"])) == (echo == "shifted")
    assert ModelSpec.objects.filter(project=project).count() == 2


def capped(limit):  # type: ignore[no-untyped-def]
    """A server that gives at most `limit` top log-probabilities, as vLLM's max_logprobs caps
    them: each list keeps its `limit` likeliest tokens."""

    def rewrite(sent, answer):  # type: ignore[no-untyped-def]
        for choice in answer.get("choices", []):
            tops = (choice.get("logprobs") or {}).get("top_logprobs") or []
            for i, top in enumerate(tops):
                if top:
                    tops[i] = dict(sorted(top.items(), key=lambda kv: -kv[1])[:limit])
        return answer

    return rewrite


def test_a_server_that_caps_its_top_list_falls_back_to_a_right_echo(sentiment, aligned, counted):
    """Only the likeliest token is listed: " positive" never is (the model favours " negative"),
    so every example is asked again by echo, and still equals the forward pass."""
    model, server = aligned
    proxy = counted(server)
    proxy.rewrite = capped(1)
    run = run_evaluation(scored(sentiment, proxy, SINGLE).pk)
    assert run.status == "succeeded", run.error
    oracle = ForwardPass(model)
    prompts = contexts(run)
    outside = [p for p in prompts.values() if oracle.rank(p, " positive") >= 1]
    assert run.metrics["server"]["path"] == "next" and run.metrics["server"]["top"] == 1
    assert run.metrics["server"]["fallback"] == len(outside) > 0
    assert_forward_pass(run, model, SINGLE)


def test_a_server_that_caps_its_top_list_and_shifts_its_echo_is_refused(
    sentiment, shifted, counted
):
    _, server = shifted
    proxy = counted(server)
    proxy.rewrite = capped(1)
    run = run_evaluation(scored(sentiment, proxy, SINGLE).pk)
    assert run.status == "failed", run.metrics
    assert "not among the 1 most likely" in run.error and "shifted" in run.error, run.error
