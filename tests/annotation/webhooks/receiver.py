"""A webhook receiver on 127.0.0.1 for the tests: it records every request it gets and answers
each with the next of the answers it was given (the last one repeated)."""

import http.server
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    path: str


@dataclass
class Receiver:
    url: str
    answers: list[tuple[int, dict[str, str], bytes]]
    received: list[Received] = field(default_factory=list)


@contextmanager
def receiver(*answers: tuple[int, dict[str, str], bytes]) -> Iterator[Receiver]:
    """A receiver answering `answers` in turn: (status, headers, body)."""
    got = Receiver("", list(answers) or [(204, {}, b"")])

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            headers = {name.lower(): value for name, value in self.headers.items()}
            got.received.append(Received(headers, body, self.path))
            status, extra, reply = got.answers[min(len(got.received), len(got.answers)) - 1]
            time.sleep(float(extra.get("X-Test-Sleep", 0)))  # a receiver slower than the deadline
            self.send_response(status)
            for name, value in {"Content-Length": str(len(reply)), **extra}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    got.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield got
    finally:
        server.shutdown()
        server.server_close()
