"""What a served model's server gets right, found with a few small canary requests: the Check
on the Models page and in the API, and the start of every served run (docs/models.md).

- The server answers, takes the key, and lists the model's name in `/models` (where it lists
  any).
- The next token's log-probabilities: a canary prompt, `max_tokens: 1`, the top
  log-probabilities; the greedy token `g` and its value `v`. Asked twice, the same figures.
- The prompt's log-probabilities (`echo`): the canary followed by `g`, echoed. Every prompt
  token but the first has a value, and `g`'s own entry holds `v` (aligned), or only the entry
  before it lists `g` with `v` in its top list (shifted: each value was read from the logits
  after its token, as llama-cpp-python's server does for a model that adds no BOS), or neither
  (wrong), or there are none (absent: llama-cpp-python started without --logits_all).
"""

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from annotation.outbound.lines import Aborted, Refused, Reply, Unanswered
from evaluation.runners.base import RunnerError
from evaluation.runners.completions import (
    TOP,
    Answer,
    Request,
    echo_request,
    generation_request,
    next_token_request,
)
from evaluation.runners.served import Beat, ServedModel

# Canary prompts: if the greedy token after one merges with its end when echoed, the next is
# tried.
CANARIES = ("The capital of France is", "One, two, three, four,", "Once upon a time, there")
SAME = 1e-3  # the same log-probability, computed in two batches of different shapes


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)  # what stops a run
    notes: list[str] = field(default_factory=list)  # what the server lacks, and what is done
    lists_source: bool | None = None  # None: the server keeps no list
    echo: str = "unknown"  # "aligned", "shifted", "wrong", "absent" or "unknown"
    top: int = 0  # how many top log-probabilities the server gives for the next token
    repeatable: bool | None = None
    spent: list[Answer] = field(default_factory=list)  # the canaries' requests and tokens
    beat: Beat = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        figures = {k: v for k, v in asdict(self).items() if k not in ("spent", "beat")}
        return {"ok": self.ok, **figures, "requests": len(self.spent)}


def models_problem(
    exchange: Callable[..., Reply], source: str, host: str, *, deadline: float
) -> tuple[str, str]:
    """Why the server's model list refuses `source`, and the field to blame ("" if it does
    not). `exchange`: a Line's, or a client's."""
    try:
        reply = exchange("GET", "/models", deadline=deadline)
    except Unanswered as error:
        return "base_url", (
            f"The server at {host} did not answer ({error}), so no worker could score with it: "
            "check the base URL, or start the server first."
        )
    except (Refused, Aborted) as error:
        return "base_url", f"The server at {host} was refused: {error}."
    if reply.status in (401, 403):
        return "api_key", f"The server at {host} refused the API key (HTTP {reply.status})."
    if reply.status == 404:
        return "base_url", (
            f"The server at {host} has no model list at this address (HTTP 404): the base URL "
            "is the server's OpenAI-compatible address, up to /v1 (e.g. http://host:8000/v1)."
        )
    try:
        names = [str(model["id"]) for model in reply.json()["data"]]
    except (ValueError, KeyError, TypeError):
        return "", ""
    if reply.status == 200 and names and source not in names:
        return "source", (
            f"The server at {host} serves {', '.join(names[:10])}, not {source!r}: the source is "
            "the model's name as the server lists it."
        )
    return "", ""


def probe(
    client: ServedModel,
    *,
    loglikelihood: bool,
    seconds: float,
    chat: bool = False,
    beat: Beat = None,
) -> Report:
    """What the server gets right, within about `seconds` in all; `beat` is called every
    second or so while it waits (a run's check for a cancel)."""
    ends = time.monotonic() + seconds

    def left() -> float:
        return max(ends - time.monotonic(), 0.5)

    report = Report(beat=beat)
    try:
        if client.check:  # the host, checked again where a user who is not staff named it
            client.check()
    except RunnerError as error:
        report.problems.append(str(error))
        return report
    exchange = partial(client.exchange, beat=beat)
    _, listed = models_problem(exchange, client.model, client.host, deadline=left())
    report.lists_source = not listed
    if listed:
        report.problems.append(listed)
        return report
    try:
        if loglikelihood:
            _probe_logprobs(client, report, left)
        else:
            canary = generation_request(client.model, CANARIES[0], chat=chat, max_tokens=1, stop=[])
            _ask(client, report, canary, left())
    except RunnerError as error:
        report.problems.append(str(error))
    return report


def _ask(client: ServedModel, report: Report, request: Request, seconds: float) -> dict[str, Any]:
    """One try, no retries: the answer's value, read as a run reads it
    (evaluation/runners/completions.py)."""
    answer = client.once(request, deadline=seconds, beat=report.beat)
    report.spent.append(answer)
    return answer.value


def _probe_logprobs(client: ServedModel, report: Report, left: Any) -> None:
    for prompt in CANARIES:
        canary = next_token_request(client.model, prompt, read="greedy")
        greedy = _ask(client, report, canary, left())
        token, value = greedy["token"], greedy["ll"]
        report.top = len(greedy["top"])
        again = _ask(client, report, canary, left())
        report.repeatable = again["token"] == token and abs(again["ll"] - value) <= SAME
        if not report.repeatable:
            report.notes.append(
                f"The server gives different figures for the same request ({value:.4f}, then "
                f"{again['ll']:.4f}): scores from it could not be repeated."
            )
        echo = _echo(client, report, prompt, token, value, left()) if token else ""
        if echo:
            report.echo = echo
            break
    if report.echo == "absent":
        report.notes.append(
            "The server gives no log-probabilities of a prompt's tokens (echo): labels of one "
            "token can still be scored, from the next token's top list; labels of several "
            "cannot (llama-cpp-python's server needs --logits_all true)."
        )
    elif report.echo == "wrong":
        report.notes.append(
            "The server's log-probabilities of a prompt's tokens (echo) do not agree with those "
            "it gives for the next token: only labels of one token can be scored, from the "
            "next token's top list."
        )
    elif report.echo == "shifted":
        report.notes.append(
            "This server's prompt log-probabilities (echo) are shifted by one token: each is "
            "read from the logits after its token. Labels are scored from the lists of the "
            f"likeliest next tokens instead (up to {TOP} asked), which holds for labels whose "
            "tokens rank among them."
        )


def _echo(
    client: ServedModel, report: Report, prompt: str, token: str, value: float, seconds: float
) -> str:
    """How the server's echo of `prompt` + `token` holds the greedy token's value ("" if the
    canary cannot tell: the token merged with the prompt's end)."""
    echo = _ask(client, report, echo_request(client.model, prompt, token, read="check"), seconds)
    if echo["absent"]:
        return "absent"
    if echo["holes"]:
        return "wrong"
    if not echo["single"]:
        return ""
    if echo["own"] is not None and abs(echo["own"] - value) <= SAME:
        return "aligned"
    before = echo["before"].get(token)
    if before is not None and abs(before - value) <= SAME:
        return "shifted"
    return "wrong"
