"""Models served over the OpenAI-compatible HTTP API: vLLM, TGI, SGLang, llama.cpp's server, or
an API provider (docs/models.md).

- Log-likelihoods follow lm-evaluation-harness's `gguf` backend: the server is sent
  `context + continuation` with `echo`, `logprobs` and `max_tokens: 1`, and the continuation's
  log-likelihood is the sum of the echoed `token_logprobs` of the tokens that start at or after
  the context's last character (`text_offset`), the one generated token excluded. No tokenizer
  is needed here: the server's own tokens decide, as they do for the harness.
- Generation is greedy (`temperature: 0`), through `/v1/completions`, or
  `/v1/chat/completions` with the prompt as one user message.
- `concurrency` requests are in flight at once; a request that fails with a dropped connection,
  a timeout, 429 or 5xx is sent again after a backoff (1, 2, 4 ... seconds, or the server's
  Retry-After), up to `retries` times. Other answers fail at once with the server's reason.

No redirect is followed (a base URL could otherwise lead a worker elsewhere), and the API key
is sent only in the Authorization header: it never appears in an error.
"""

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests

from evaluation.runners.base import RunnerError

RETRY_STATUSES = {408, 409, 425, 429, 500, 502, 503, 504}


@dataclass(frozen=True)
class Request:
    """One call to the server: what to post where, and how to read the answer."""

    path: str  # "/completions" or "/chat/completions", after the base URL
    body: dict[str, Any]
    context_chars: int = -1  # a log-likelihood request: where the continuation starts

    @property
    def key(self) -> str:
        """The request's identity, for storing its answer: the same request, the same key."""
        text = json.dumps([self.path, self.body], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Answer:
    value: dict[str, Any]  # {"ll": float} or {"text": str}
    prompt_tokens: int
    completion_tokens: int


def loglikelihood_request(model: str, context: str, continuation: str) -> Request:
    body = {
        "model": model,
        "prompt": context + continuation,
        "echo": True,
        "logprobs": 1,
        "max_tokens": 1,
        "temperature": 0,
    }
    return Request("/completions", body, context_chars=len(context))


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


def continuation_loglikelihood(logprobs: dict[str, Any], context_chars: int) -> float:
    """The harness's rule (lm_eval/models/gguf.py): the tokens from the first one that starts
    at or after the context's end, to the one before the generated token."""
    offsets, values = logprobs["text_offset"], logprobs["token_logprobs"]
    start = next((i for i, offset in enumerate(offsets) if offset >= context_chars), None)
    if start is None or start >= len(values) - 1:
        raise RunnerError("The server's echoed tokens hold no token of the continuation.")
    picked = values[start:-1]
    if any(value is None for value in picked):
        raise RunnerError("The server gave no log-probability for a token of the continuation.")
    return float(sum(picked))


def read_answer(request: Request, payload: dict[str, Any]) -> Answer:
    usage = payload.get("usage") or {}
    try:
        choice = payload["choices"][0]
        if request.context_chars >= 0:
            logprobs = choice.get("logprobs")
            if not logprobs or "token_logprobs" not in logprobs:
                raise RunnerError(
                    "The server answered without the prompt's log-probabilities (echo with "
                    "logprobs): it cannot score labels by log-likelihood. Use scoring "
                    "'generation', or a server that returns them (vLLM; llama.cpp's with "
                    "--logits_all true)."
                )
            value: dict[str, Any] = {
                "ll": continuation_loglikelihood(logprobs, request.context_chars)
            }
        elif "message" in choice:
            value = {"text": choice["message"].get("content") or ""}
        else:
            value = {"text": choice.get("text") or ""}
    except (KeyError, IndexError, TypeError) as error:
        raise RunnerError(f"The server's answer is not an OpenAI completion: {error!r}") from None
    return Answer(
        value, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    )


class ServedModel:
    """A client of one served model, sending requests `concurrency` at a time."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str = "",
        concurrency: int = 4,
        timeout: float = 120,
        retries: int = 8,
        backoff_max: float = 30,
        check: Callable[[], None] | None = None,
    ):
        self.base_url = base_url.rstrip("/")
        self.model, self.concurrency, self.timeout = model, concurrency, timeout
        self.retries, self.backoff_max = retries, backoff_max
        self.headers = {"Content-Type": "application/json"}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self.host = urlsplit(self.base_url).netloc
        self.check = check  # called before each try: the worker's check of the host
        self.local = threading.local()

    def answers(self, requests_: Iterable[Request]) -> Iterator[list[tuple[Request, Answer]]]:
        """The answers, in groups as they arrive (whatever is done each time one is), with at
        most `concurrency` requests in flight. A failure stops the rest and is raised."""
        todo = iter(requests_)
        pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="served")
        pending: dict[Future[Answer], Request] = {}
        try:
            while True:
                while len(pending) < self.concurrency * 2:
                    request = next(todo, None)
                    if request is None:
                        break
                    pending[pool.submit(self.send, request)] = request
                if not pending:
                    return
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                yield [(pending.pop(future), future.result()) for future in done]
        finally:  # a failure or a cancelled run: requests in flight end on their own
            pool.shutdown(wait=False, cancel_futures=True)

    def send(self, request: Request) -> Answer:
        """One request, tried again on the failures a busy or restarting server gives."""
        delay, reason = 1.0, ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(delay, self.backoff_max))
                delay *= 2
            if self.check:
                self.check()
            try:
                response = self._session().post(
                    self.base_url + request.path,
                    data=json.dumps(request.body),
                    headers=self.headers,
                    timeout=self.timeout,
                    allow_redirects=False,
                )
            except requests.Timeout:
                reason = f"no answer within {self.timeout:g} s"
                continue
            except requests.ConnectionError:
                reason = "the connection failed"
                self.local.session = None
                continue
            if response.status_code in RETRY_STATUSES:
                reason = f"HTTP {response.status_code}"
                delay = max(delay, _retry_after(response))
                continue
            if response.status_code != 200:
                raise RunnerError(
                    f"The server at {self.host} refused a request: "
                    f"HTTP {response.status_code}: {_reason(response)}"
                )
            try:
                payload = response.json()
            except ValueError:
                raise RunnerError(f"The server at {self.host} answered with no JSON.") from None
            return read_answer(request, payload)
        raise RunnerError(
            f"The server at {self.host} did not answer after {self.retries + 1} tries "
            f"({reason}). The answers so far are kept: retry the run to go on from there."
        )

    def _session(self) -> requests.Session:
        session = getattr(self.local, "session", None)
        if session is None:
            session = self.local.session = requests.Session()
            session.trust_env = False  # no proxy or .netrc credentials from the environment
        return session


def _retry_after(response: requests.Response) -> float:
    try:
        return float(response.headers.get("Retry-After", 0))
    except ValueError:
        return 0.0


def _reason(response: requests.Response) -> str:
    """The server's own message, short (never our request's headers)."""
    try:
        error = response.json().get("error")
        text = error.get("message") if isinstance(error, dict) else error or response.text
    except (ValueError, AttributeError):
        text = response.text
    return str(text)[:300]
