"""The OpenAI-compatible completions API as ContrastLab speaks it: the requests it sends and how
it reads each answer (docs/models.md). Nothing here sends anything: the client is
evaluation/runners/served.py.

A continuation's log-likelihood is read by one of three rules, chosen for each run by what the
server gets right (evaluation/runners/probe.py checks it with canary requests):

- `next`: the prompt alone, `max_tokens: 1`, the top log-probabilities of the next token; a
  label of one token is read from that list, so one request scores every such label.
- `echo`: prompt and continuation with `echo`; the continuation's tokens are those the server
  says start from the context's end to the prompt's end (`text_offset`), never counted from
  the end of the list (the answer may or may not hold the generated token).
- `echo-shifted`: as `echo`, for a server whose echoed values are each read from the logits
  after their token, not before it (llama-cpp-python's, for a model that adds no BOS): each
  continuation token's value is read from the entry before it, in its top log-probabilities.

The Check reads its canaries here too (`greedy`, `check`). Every log-probability must be a
finite number, at most 0. Generation is greedy (`temperature: 0`), through `/v1/completions`,
or `/v1/chat/completions` with the prompt as one user message.
"""

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

from evaluation.runners.base import RunnerError

TOP = 20  # top log-probabilities asked for: vLLM's default cap (max_logprobs)
SLACK = 1e-6  # a log-probability above 0 by float rounding only


@dataclass(frozen=True)
class Request:
    """One call to the server: what to post where, and how to read the answer."""

    path: str  # "/completions" or "/chat/completions", after the base URL
    body: dict[str, Any]
    read: str = "text"  # "text", "next", "greedy", "echo", "echo-shifted", "tokens", "check"
    span: tuple[int, int] = (0, 0)  # echo: the continuation's characters in the prompt

    @property
    def key(self) -> str:
        """The request's identity, for storing its answer: the same request, the same key."""
        text = json.dumps([self.path, self.body, self.read, self.span], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Answer:
    value: dict[str, Any]  # {"ll": float}, {"top": {token: lp}, ...}, {"text": str}, ...
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reused: bool = False  # taken from an earlier run of the same model, not asked now


def next_token_request(model: str, context: str, read: str = "next") -> Request:
    """`read`: "next" (the top list), or "greedy" (also the greedy token and its value)."""
    body = {"model": model, "prompt": context, "max_tokens": 1, "logprobs": TOP, "temperature": 0}
    return Request("/completions", body, read=read)


def echo_request(model: str, context: str, continuation: str, read: str = "echo") -> Request:
    """`read`: "echo", "echo-shifted" (which needs the top lists), or "tokens" (the
    continuation's tokens as the server cuts them)."""
    body = {
        "model": model,
        "prompt": context + continuation,
        "echo": True,
        "logprobs": TOP if read == "echo-shifted" else 1,
        "max_tokens": 1,
        "temperature": 0,
    }
    span = (len(context), len(context) + len(continuation))
    return Request("/completions", body, read=read, span=span)


def generation_request(
    model: str, prompt: str, *, chat: bool, max_tokens: int, stop: list[str]
) -> Request:
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "temperature": 0}
    if stop:
        body["stop"] = stop[:4]  # OpenAI's API takes at most four
    if chat:
        return Request(
            "/chat/completions", {**body, "messages": [{"role": "user", "content": prompt}]}
        )
    return Request("/completions", {**body, "prompt": prompt})


def logprob(value: Any) -> float:
    """A log-probability as the server gave it, if it is one: a finite number, at most 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RunnerError(f"The server gave {value!r} where a log-probability belongs.")
    if not math.isfinite(value) or value > SLACK:
        raise RunnerError(
            f"The server gave the log-probability {value!r}, which no probability has "
            "(a log-probability is finite and at most 0)."
        )
    return min(float(value), 0.0)


def top_list(entry: Any) -> dict[str, float]:
    if not isinstance(entry, dict):
        raise RunnerError("The server's top log-probabilities are not a list of tokens.")
    # A token of NUL is no label's (and PostgreSQL stores no NUL in JSON): left out.
    return {str(t): logprob(value) for t, value in entry.items() if "\x00" not in str(t)}


def span_tokens(logprobs: dict[str, Any], span: tuple[int, int]) -> list[int]:
    """The indices of the echoed tokens that start from the context's end to the prompt's end."""
    offsets, tokens = logprobs.get("text_offset"), logprobs.get("tokens")
    if not isinstance(offsets, list) or not isinstance(tokens, list):
        raise RunnerError("The server's echo holds no tokens with their offsets.")
    picked = [i for i, at in enumerate(offsets) if isinstance(at, int) and span[0] <= at < span[1]]
    if not picked:
        raise RunnerError("The server's echoed tokens hold no token of the continuation.")
    return picked


def echoed_loglikelihood(logprobs: dict[str, Any], span: tuple[int, int], shifted: bool) -> float:
    """The continuation's log-likelihood: the sum of its tokens' values, each from its own
    entry, or (`shifted`) from the top list of the entry before it."""
    values = logprobs.get("token_logprobs")
    tops = logprobs.get("top_logprobs")
    tokens = logprobs["tokens"]
    total = 0.0
    for i in span_tokens(logprobs, span):
        if not shifted:
            value = values[i] if isinstance(values, list) and i < len(values) else None
            if value is None:
                raise RunnerError("The server gave no log-probability for a continuation token.")
            total += logprob(value)
            continue
        before = tops[i - 1] if isinstance(tops, list) and 0 < i <= len(tops) else None
        ranked = top_list(before) if before is not None else {}
        if tokens[i] not in ranked:
            raise RunnerError(
                f"The token {tokens[i]!r} of a continuation is not among the {len(ranked)} "
                "most likely tokens the server lists before it, and this server's echoed "
                "log-probabilities are shifted by one token, so its own value is not given."
            )
        total += ranked[tokens[i]]
    return total


def read_value(request: Request, choice: dict[str, Any]) -> dict[str, Any]:
    if request.read == "text":
        if "message" in choice:
            text = (choice["message"] or {}).get("content")
        else:
            text = choice.get("text")
        return {"text": str(text or "").replace("\x00", "")}  # PostgreSQL stores no NUL
    logprobs = choice.get("logprobs")
    if request.read == "check":
        return echo_check(logprobs, request.span)
    if request.read == "tokens" and isinstance(logprobs, dict):
        tokens = logprobs["tokens"]
        return {"tokens": [str(tokens[i]) for i in span_tokens(logprobs, request.span)]}
    if not isinstance(logprobs, dict) or not logprobs.get("token_logprobs"):
        raise RunnerError(
            "The server answered without log-probabilities: it cannot score labels by "
            "log-likelihood. Use scoring 'generation', or a server that returns them (vLLM; "
            "llama-cpp-python's with --logits_all true)."
        )
    if request.read in ("next", "greedy"):
        tops = logprobs.get("top_logprobs")
        top = {"top": top_list(tops[0] if isinstance(tops, list) and tops else None)}
        if request.read == "next":
            return top
        # The Check's: the greedy token too (never stored), by its own text: a server may go
        # on past a token that is part of a character (llama-cpp-python's `text` then holds two).
        token = (logprobs.get("tokens") or [choice.get("text") or ""])[0]
        return {**top, "token": str(token), "ll": logprob(logprobs["token_logprobs"][0])}
    shifted = request.read == "echo-shifted"
    tokens = [str(logprobs["tokens"][i]) for i in span_tokens(logprobs, request.span)]
    return {"ll": echoed_loglikelihood(logprobs, request.span, shifted), "tokens": tokens}


def echo_check(logprobs: Any, span: tuple[int, int]) -> dict[str, Any]:
    """An echo as the Check reads it (evaluation/runners/probe.py): whether it holds no
    prompt log-probabilities (`absent`), or lacks one after the prompt's first token
    (`holes`); whether the continuation is one token, from the span's start (`single`); and
    that token's value in its own entry (`own`, None if none) and the top list of the entry
    before it (`before`)."""
    values = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
    if not isinstance(values, list) or all(v is None for v in values):
        return {"absent": True, "holes": False, "single": False, "own": None, "before": {}}
    offsets, tops = logprobs.get("text_offset") or [], logprobs.get("top_logprobs") or []
    inside = [i for i, at in enumerate(offsets) if isinstance(at, int) and at < span[1]]
    holes = any(values[i] is None for i in inside[1:] if i < len(values))
    at = [i for i in inside if offsets[i] == span[0]]
    single = not holes and len(at) == 1 and at[0] == inside[-1] and at[0] < len(values)
    held = _held(values, tops, at[0]) if single else {"own": None, "before": {}}
    return {"absent": False, "holes": holes, "single": single, **held}


def _held(values: list[Any], tops: list[Any], i: int) -> dict[str, Any]:
    """The value of an echo's token `i` in its own entry, and the top list of the entry
    before it."""
    own = logprob(values[i]) if values[i] is not None else None
    before = top_list(tops[i - 1]) if 0 < i <= len(tops) and tops[i - 1] else {}
    return {"own": own, "before": before}


def read_answer(request: Request, payload: Any) -> Answer:
    try:
        choice = payload["choices"][0]
        value = read_value(request, choice)
        usage = payload.get("usage") or {}
        return Answer(
            value, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        )
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        raise RunnerError(
            "The server's answer is not an OpenAI completion (its fields are missing or of "
            "the wrong type)."
        ) from None
