"""A served model's outages: while the server does not answer, what the run's page says the run
does about it; once the run ends, what happened (EvaluationRun.notice)."""

import threading
import time


class Outage:
    """What the run's page says while the server does not answer, and what the finished run
    keeps: the retries of every request, from the threads that send them."""

    def __init__(self, retries: int) -> None:
        self.retries = retries
        self.lock = threading.Lock()
        self.since: float | None = None  # the current outage's start
        self.tries = 0  # the most tries of one request in it
        self.reason = ""
        self.next_at = 0.0
        self.seconds = 0.0  # every outage's length, the current one left out
        self.outages = 0
        self.retried = 0  # requests sent again, in every outage

    def failed(self, reason: str, attempt: int, delay: float) -> None:
        """A request's `attempt`-th try (0 the first) failed; it is sent again after `delay`."""
        with self.lock:
            now = time.monotonic()
            if self.since is None:
                self.since, self.tries = now, 0
                self.outages += 1
            self.retried += 1
            self.reason = reason
            if attempt + 1 >= self.tries:
                self.tries, self.next_at = attempt + 1, now + delay

    def answered(self) -> None:
        with self.lock:
            if self.since is not None:
                self.seconds += time.monotonic() - self.since
                self.since = None

    def notice(self) -> str:
        """While the server does not answer: what the run does about it, in words."""
        with self.lock:
            if self.since is None:
                return ""
            wait = max(0, round(self.next_at - time.monotonic()))
            return (
                f"The server is not answering ({self.reason}) for "
                f"{round(time.monotonic() - self.since)} s: retrying, try {self.tries + 1} of "
                f"{self.retries + 1} in {wait} s."
            )

    def summary(self) -> str:
        """What the finished run keeps of its outages ("" with none)."""
        with self.lock:
            seconds = self.seconds + (time.monotonic() - self.since if self.since else 0)
            if not self.outages:
                return ""
            times = "once" if self.outages == 1 else f"{self.outages} times"
            return (
                f"The server stopped answering {times}, {round(seconds)} s in all "
                f"(last: {self.reason}); {self.retried} requests were sent again."
            )
