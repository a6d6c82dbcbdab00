"""A model server that is slow, endless, huge or lying (tests/evaluation/hostile.py) holds
nothing for ever and fills no memory: each answer has a deadline for the whole of it and a cap
on its size (annotation/outbound/lines.py); registration answers within seconds; every
malformed log-probability fails the run with words a user understands; a cancelled run cuts
its requests in flight (docs/security.md)."""

import json
import math
import re

import pytest

from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runners.base import RunnerError
from evaluation.runners.completions import echo_request, next_token_request
from evaluation.runners.probe import probe
from evaluation.runners.served import ServedModel
from evaluation.runs.execute import run_evaluation
from tests.evaluation.hostile import MODEL, HostileServer
from tests.evaluation.runs.test_served import KEY, start


@pytest.fixture
def hostile():  # type: ignore[no-untyped-def]
    servers = []

    def make(mode="json", payload=None, **options):  # type: ignore[no-untyped-def]
        servers.append(HostileServer(mode, payload, **options))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


def client(server, **options):  # type: ignore[no-untyped-def]
    return ServedModel(server.url, MODEL, api_key=KEY, **{"timeout": 2, "retries": 0, **options})


@pytest.mark.parametrize("mode", ["slow-headers", "slow-body"])
def test_a_server_that_drips_its_answer_is_cut_at_the_deadline(hostile, mode):
    """A byte every 0.3 s never trips a socket's timeout; the whole answer's deadline cuts it."""
    server = hostile(mode)
    with pytest.raises(RunnerError, match=r"no whole answer within 2 s"):
        client(server).send(next_token_request(MODEL, "Review:"))
    assert server.hung_up.wait(5), "the connection was left open"


@pytest.mark.parametrize("mode", ["endless", "huge"])
def test_an_answer_over_the_cap_is_refused_and_read_no_further(hostile, mode):
    server = hostile(mode)
    with pytest.raises(RunnerError, match=r"more than the 1 MB this site reads"):
        client(server, max_bytes=1_000_000).send(next_token_request(MODEL, "Review:"))
    assert server.hung_up.wait(5)


def echo(values, tokens=("Review", ":", " good"), offsets=(0, 6, 7)):  # type: ignore[no-untyped-def]
    logprobs = {"tokens": list(tokens), "text_offset": list(offsets), "token_logprobs": values,
                "top_logprobs": [None] * len(tokens)}  # fmt: skip
    return {"choices": [{"text": "", "logprobs": logprobs}]}


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        (echo([None, True, False]), "where a log-probability belongs"),
        (echo([None, -0.1, 50.0]), "which no probability has"),
        (echo([None, -0.1, math.nan]), "which no probability has"),
        (echo([None, -0.1, -math.inf]), "which no probability has"),
        (echo([None, -0.1, "-1.0"]), "where a log-probability belongs"),
        (echo([None, -0.1, None]), "no log-probability for a continuation token"),
        ({"choices": "x"}, "not an OpenAI completion"),
        ({"choices": ["x"]}, "not an OpenAI completion"),
        ({"choices": [{"logprobs": "x"}]}, "without log-probabilities"),
        ({"choices": [{"logprobs": {"token_logprobs": [-1.0], "tokens": 3}}]}, "no tokens"),
        ([1, 2], "not an OpenAI completion"),
    ],
)  # fmt: skip
def test_a_malformed_answer_fails_with_a_reason_a_user_reads(hostile, payload, said):
    server = hostile("json", payload)
    with pytest.raises(RunnerError) as caught:
        client(server).send(echo_request(MODEL, "Review:", " good"))
    assert said in str(caught.value)


def test_an_impossible_top_log_probability_fails_the_run(sentiment, hostile):
    """Over a whole run, as a user meets it: the run fails, and says why."""
    project, release, root = sentiment
    top = {"choices": [{"text": " good", "logprobs": {
        "tokens": [" good"], "text_offset": [7], "token_logprobs": [-0.5],
        "top_logprobs": [{" good": -0.5, " bad": True}]}}]}  # fmt: skip
    server = hostile("json", top)
    spec = ModelSpec.objects.create(project=project, name="h", kind="openai-compatible",
                                    source=MODEL, base_url=server.url)  # fmt: skip
    run = run_evaluation(start(root, release, spec.pk))
    assert run.status == "failed" and "where a log-probability belongs" in run.error, run.error


def test_the_key_a_server_quotes_back_is_scrubbed_from_the_error(sentiment, hostile):
    """As OpenAI's 401 does: 'Incorrect API key provided: sk-...'."""
    project, release, root = sentiment
    server = hostile("json")
    server.payload = {"error": {"message": f"Incorrect API key provided: Bearer {KEY[:20]}..."}}

    def answer_401(handler):  # type: ignore[no-untyped-def]
        data = json.dumps(server.payload).encode()
        handler.wfile.write(b"HTTP/1.1 401 X\r\nContent-Length: %d\r\n\r\n" % len(data) + data)

    server.answer = answer_401
    with pytest.raises(RunnerError) as caught:
        client(server).send(next_token_request(MODEL, "Review:"))
    assert "HTTP 401" in str(caught.value) and KEY[:12] not in str(caught.value)
    spec = root.post("/api/models/", {
        "project": project.slug, "name": "k", "kind": "openai-compatible", "source": MODEL,
        "base_url": server.url, "api_key": KEY}, format="json")  # fmt: skip
    assert spec.status_code == 201, spec.json()
    run = EvaluationRun.objects.get(pk=start(root, release, spec.json()["id"]))
    run = run_evaluation(run.pk)
    assert run.status == "failed" and "Incorrect API key" in run.error
    assert KEY[:12] not in run.error
    assert KEY[:12] not in root.get(f"/api/evaluations/{run.pk}/").content.decode()


def test_registration_does_not_wait_on_a_server_that_drips_its_model_list(sentiment, hostile):
    """Four of these in parallel held four gunicorn workers for 30 s each: now each answers
    400 at its deadline, and the server sees the hang-up."""
    project, _, root = sentiment
    server = hostile("slow-body", models_too=True)
    answer = root.post("/api/models/", {
        "project": project.slug, "name": "slow", "kind": "openai-compatible", "source": MODEL,
        "base_url": server.url}, format="json")  # fmt: skip
    assert answer.status_code == 400, answer.json()
    assert "no whole answer within 5 s" in answer.json()["detail"]
    assert server.hung_up.wait(5)
    assert not ModelSpec.objects.filter(name="slow").exists()


def test_a_huge_model_list_at_registration_is_refused(sentiment, hostile):
    project, _, root = sentiment
    server = hostile("huge", models_too=True)
    answer = root.post("/api/models/", {
        "project": project.slug, "name": "huge", "kind": "openai-compatible", "source": MODEL,
        "base_url": server.url}, format="json")  # fmt: skip
    assert answer.status_code == 400 and "MB" in answer.json()["detail"], answer.json()


def canary_server(hostile, echo):  # type: ignore[no-untyped-def]
    """A server whose greedy token after any prompt is " Paris", at -0.5, and whose echo of a
    prompt (split at spaces, each piece a token) is `echo(tokens, n)`'s values and top lists,
    for its n-th echo."""
    server, echoes = hostile("json"), []

    def answer(handler):  # type: ignore[no-untyped-def]
        body = json.loads(handler.body)
        prompt = body["prompt"]
        if body.get("echo"):
            tokens = re.findall(r"\s*\S+", prompt)
            offsets = [len("".join(tokens[:i])) for i in range(len(tokens))]
            values, tops = echo(tokens, len(echoes))
            echoes.append(prompt)
            logprobs = {"tokens": tokens, "text_offset": offsets, "token_logprobs": values,
                        "top_logprobs": tops}  # fmt: skip
        else:
            top = {" Paris": -0.5, " Lyon": -1.5}
            logprobs = {"tokens": [" Paris"], "text_offset": [len(prompt)],
                        "token_logprobs": [-0.5], "top_logprobs": [top]}  # fmt: skip
        data = json.dumps({"choices": [{"text": "", "logprobs": logprobs}], "usage": {}}).encode()
        head = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(data)
        handler.wfile.write(head + data)

    server.answer = answer
    return server, echoes


def echoed(own, before, hole=False):  # type: ignore[no-untyped-def]
    """The greedy token's own value `own`, and `before` as the top list of the entry before it;
    every other token -1.0 (the first none), or none at the third (`hole`)."""

    def echo(tokens, n):  # type: ignore[no-untyped-def]
        values = [None] + [-1.0] * (len(tokens) - 2) + [own]
        if hole:
            values[2] = None
        tops = [None] + [{t: -1.0} for t in tokens[1:-2]] + [before, {tokens[-1]: own}]
        return values, tops

    return echo


@pytest.mark.parametrize(
    ("echo", "told"),
    [
        (echoed(-0.5, {" is": -1.0}), "aligned"),  # its own entry holds -0.5
        (echoed(-3.0, {" Paris": -0.5}), "shifted"),  # only the entry before lists it at -0.5
        (echoed(-3.0, {" Paris": -2.0}), "wrong"),  # neither
        (echoed(-0.5, {" is": -1.0}, hole=True), "wrong"),  # a prompt token without a value
        (lambda tokens, n: ([None] * len(tokens), [None] * len(tokens)), "absent"),
    ],
)
def test_the_check_reads_how_an_echo_holds_the_greedy_tokens_value(hostile, echo, told):
    server, echoes = canary_server(hostile, echo)
    report = probe(client(server), loglikelihood=True, seconds=10)
    assert report.echo == told and report.problems == []
    assert len(echoes) == 1 and echoes[0].endswith(" Paris")  # the first canary told
    assert report.repeatable is True and report.top == 2


def test_the_check_tries_another_canary_where_the_greedy_token_merges_with_the_prompt(hostile):
    def echo(tokens, n):  # type: ignore[no-untyped-def]
        values, tops = echoed(-0.5, {" x": -1.0})(tokens, n)
        if n == 0:  # the prompt's last piece and " Paris" echoed as one token
            tokens[-2:] = [tokens[-2] + tokens[-1]]
            values, tops = values[:-1], tops[:-1]
        return values, tops

    server, echoes = canary_server(hostile, echo)
    report = probe(client(server), loglikelihood=True, seconds=10)
    assert report.echo == "aligned" and len(echoes) == 2 and echoes[0] != echoes[1]
    assert report.as_dict()["requests"] == 6  # two canaries: twice the next token, one echo
