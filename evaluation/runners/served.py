"""The client of a model served over the OpenAI-compatible HTTP API: vLLM, TGI, SGLang,
llama.cpp's server, or an API provider (docs/models.md). What it sends and how each answer is
read: evaluation/runners/completions.py.

`concurrency` requests are in flight at once, each with a deadline for its whole answer
(`timeout`) and a cap on its size (annotation/outbound/lines.py); one that fails with a
dropped connection, the deadline, 429 or 5xx is sent again after a backoff (1, 2, 4 ...
seconds, or the server's Retry-After), up to `retries` times. Other answers fail at once with
the server's reason, with the API key scrubbed from it. No redirect is followed, and the key
is sent only in the Authorization header.
"""

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from annotation.outbound.lines import Aborted, Line, Refused, Reply, Unanswered
from annotation.outbound.secrets import scrub
from evaluation.runners.base import RunnerError
from evaluation.runners.completions import Answer, Request, read_answer
from evaluation.runners.outage import Outage

RETRY_STATUSES = {408, 409, 425, 429, 500, 502, 503, 504}
BEAT = 1.0  # seconds between the checks for a cancel while answers are awaited
Beat = Callable[[], None] | None


@dataclass
class ServedModel:
    """A client of one served model, sending requests `concurrency` at a time."""

    base_url: str
    model: str
    api_key: str = ""
    concurrency: int = 4
    timeout: float = 120  # seconds for each whole answer
    retries: int = 8
    backoff_max: float = 30
    max_bytes: int = 8_000_000
    check: Callable[[], None] | None = None  # called before each try: the host's check
    address: str | None = None  # connect here, not to what the name resolves to (hosts.py)
    line: Line = field(init=False)
    outage: Outage = field(init=False)

    def __post_init__(self) -> None:
        self.base_url = self.base_url.rstrip("/")
        self.outage = Outage(self.retries)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        self.line = Line(
            self.base_url,
            headers=headers,
            deadline=self.timeout,
            max_bytes=self.max_bytes,
            address=self.address,
        )

    @property
    def host(self) -> str:
        return f"{self.line.hostname}" + (f":{self.line.port}" if self.line.port else "")

    def answers(self, requests_: Iterable[Request]) -> Iterator[list[tuple[Request, Answer]]]:
        """The answers, in groups as they arrive (whatever is done each time one is; an empty
        group every BEAT seconds while none is, so that the caller can check for a cancel),
        with at most `concurrency` requests in flight. A failure stops the rest and is raised;
        leaving early (a cancel) cuts the requests in flight."""
        todo = iter(requests_)
        pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="served")
        pending: dict[Future[Answer], Request] = {}
        finished = False
        try:
            while True:
                while len(pending) < self.concurrency * 2:
                    request = next(todo, None)
                    if request is None:
                        break
                    pending[pool.submit(self.send, request)] = request
                if not pending:
                    finished = True
                    return
                done, _ = wait(pending, timeout=BEAT, return_when=FIRST_COMPLETED)
                yield [(pending.pop(future), future.result()) for future in done]
        finally:
            if not finished:  # a failure or a cancel: the requests in flight are cut
                self.line.abort()
            pool.shutdown(wait=True, cancel_futures=True)
            self.line.close()  # the pool's threads are gone: so are their connections

    def exchange(
        self, method: str, path: str, body: Any = None, *, deadline: float, beat: Beat = None
    ) -> Reply:
        """One exchange, not tried again. `beat` is called every BEAT seconds while it waits:
        what it raises (a cancel) cuts the exchange and is raised."""
        if beat is None:
            return self.line.exchange(method, path, body, deadline=deadline)
        with ThreadPoolExecutor(1, thread_name_prefix="served-check") as pool:
            future = pool.submit(self.line.exchange, method, path, body, deadline=deadline)
            while True:
                try:
                    return future.result(timeout=BEAT)
                except TimeoutError:
                    try:
                        beat()
                    except BaseException:
                        self.line.abort()
                        raise

    def once(self, request: Request, *, deadline: float, beat: Beat = None) -> Answer:
        """One request, tried once within `deadline` (the Check's), read as `send` reads it."""
        try:
            reply = self.exchange("POST", request.path, request.body, deadline=deadline, beat=beat)
        except (Unanswered, Refused, Aborted) as error:
            problem = f"The server at {self.host} gave no usable answer: {error}."
            raise RunnerError(problem) from None
        if reply.status != 200:
            raise RunnerError(
                f"The server at {self.host} answered a canary request with HTTP {reply.status}: "
                + self.scrub(_reason(reply))
            )
        try:
            return read_answer(request, reply.json())
        except ValueError:
            raise RunnerError(f"The server at {self.host} answered with no JSON.") from None

    def send(self, request: Request) -> Answer:
        """One request, tried again on the failures a busy or restarting server gives."""
        return read_answer(request, self.post(request.path, request.body))

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """The JSON a POST is answered with, tried again as `send` says."""
        delay, reason = 1.0, ""
        for attempt in range(self.retries + 1):
            if attempt:
                self.outage.failed(reason, attempt - 1, min(delay, self.backoff_max))
                self._pause(min(delay, self.backoff_max))
                delay *= 2
            if self.check:
                self.check()
            try:
                reply = self.line.exchange("POST", path, body)
            except Unanswered as error:
                reason = str(error)
                continue
            except Refused as error:
                raise RunnerError(f"The server at {self.host} was refused: {error}.") from None
            except Aborted:
                raise RunnerError("The run was cancelled.") from None
            if reply.status in RETRY_STATUSES:
                reason = f"HTTP {reply.status}"
                delay = max(delay, _retry_after(reply))
                continue
            self.outage.answered()
            if reply.status != 200:
                raise RunnerError(
                    f"The server at {self.host} refused a request: "
                    f"HTTP {reply.status}: {self.scrub(_reason(reply))}"
                )
            try:
                return reply.json()
            except ValueError:
                raise RunnerError(f"The server at {self.host} answered with no JSON.") from None
        raise RunnerError(
            f"The server at {self.host} did not answer after {self.retries + 1} tries "
            f"({reason}). The answers so far are kept: retry the run to go on from there."
        )

    def scrub(self, text: str) -> str:
        """A server's words without the key, as servers quote what they were sent."""
        return scrub(text, self.api_key)

    def _pause(self, seconds: float) -> None:
        if self.line.aborted.wait(seconds):
            raise RunnerError("The run was cancelled.")


def _retry_after(reply: Reply) -> float:
    try:
        return min(float(reply.headers.get("retry-after", 0)), 300.0)
    except ValueError:
        return 0.0


def _reason(reply: Reply) -> str:
    """The server's own message, short (never our request's headers)."""
    try:
        error = reply.json().get("error")
        text = error.get("message") if isinstance(error, dict) else error
    except (ValueError, AttributeError):
        text = None
    return str(text or reply.body.decode("utf-8", "replace"))[:300]
