"""Every request the product sends out goes through one `Line` (docs/security.md): a model
server's (the registration's check, the Check, a run's requests) and a webhook's delivery:

- a wall-clock deadline for the whole exchange, connection, headers and body together: a
  server that sends a byte every second is cut off at the deadline, not kept for ever (a
  socket's timeout bounds each read, not the answer);
- a cap on the answer's size, read as it streams, so that no answer fills a process's memory;
- `abort()` cuts every open exchange at once and refuses new ones: a cancelled run frees its
  worker without waiting for the server;
- no proxy, `.netrc` or redirect from the environment (http.client reads none of them), and
  no compressed answers (none are asked for, so none are inflated).

A cut is made by shutting the socket down from a timer's thread, which wakes the read that
waits on it at once.
"""

import contextlib
import http.client
import json
import socket
import threading
import time
from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import urlsplit


class Unanswered(Exception):
    """No whole answer came: a dropped connection or the deadline (worth another try)."""


class Refused(Exception):
    """An answer no try will mend: too large, or not HTTP."""


class Aborted(Exception):
    """The line was aborted (its run was cancelled)."""


@dataclass
class Reply:
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Line:
    """Exchanges with one server, from any number of threads (one open connection each, kept
    between exchanges)."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: dict[str, str],
        deadline: float,
        max_bytes: int,
        reader: str = "a model server (SERVED_MODEL_MAX_ANSWER_BYTES)",
        address: str | None = None,
    ):
        parts = urlsplit(base_url.rstrip("/"))
        self.https = parts.scheme == "https"
        self.hostname, self.port = parts.hostname or "", parts.port
        self.prefix = parts.path
        self.headers, self.deadline, self.max_bytes = headers, deadline, max_bytes
        self.reader = reader  # whose answers the cap is for, and the setting, in its refusal
        # Connect to this address, not to what the host name resolves to now (the address the
        # host rules checked: annotation/outbound/hosts.py); TLS still verifies the name.
        self.address = address
        self.aborted = threading.Event()
        self.local = threading.local()
        self.open: set[http.client.HTTPConnection] = set()
        self.lock = threading.Lock()

    def exchange(
        self, method: str, path: str, body: Any = None, *, deadline: float | None = None
    ) -> Reply:
        """One request and its whole answer, within `deadline` seconds (the line's own by
        default); `body` is sent as JSON, or as it is if it is bytes already (a signed one).
        Raises Unanswered, Refused or Aborted."""
        if self.aborted.is_set():
            raise Aborted
        seconds = self.deadline if deadline is None else deadline
        ends = time.monotonic() + seconds
        data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
        headers = {**self.headers, "Accept-Encoding": "identity"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        connection = self._connection(seconds)
        cut = threading.Event()
        timer = None
        try:
            if connection.sock is None:
                connection.connect()  # within `seconds`: the socket's own timeout
            if self.aborted.is_set():
                raise Aborted
            timer = threading.Timer(max(ends - time.monotonic(), 0), _cut, (connection, cut))
            timer.daemon = True
            timer.start()
            connection.request(method, self.prefix + path, body=data, headers=headers)
            answer = connection.getresponse()
            reply = Reply(
                answer.status,
                {name.lower(): value for name, value in answer.getheaders()},
                self._read(answer),
            )
        except (OSError, http.client.HTTPException) as error:
            self._drop(connection)
            if self.aborted.is_set():
                raise Aborted from None
            if cut.is_set() or isinstance(error, TimeoutError):
                raise Unanswered(f"no whole answer within {seconds:g} s") from None
            if isinstance(error, ConnectionRefusedError):
                raise Unanswered("the connection was refused") from None
            if isinstance(error, (OSError, http.client.IncompleteRead)):
                raise Unanswered("the connection failed") from None
            raise Refused(f"its answer is not HTTP ({error.__class__.__name__})") from None
        except (Refused, Aborted):
            self._drop(connection)
            raise
        finally:
            if timer is not None:
                timer.cancel()
        if cut.is_set():  # what was read before the cut may parse as a whole answer
            self._drop(connection)
            raise Unanswered(f"no whole answer within {seconds:g} s")
        if answer.will_close:
            self._drop(connection)
        return reply

    def abort(self) -> None:
        """Cut every open exchange now, and refuse every later one."""
        self.aborted.set()
        with self.lock:
            for connection in list(self.open):
                _cut(connection, None)

    def close(self) -> None:
        with self.lock:
            for connection in list(self.open):
                connection.close()
            self.open.clear()

    def _read(self, answer: http.client.HTTPResponse) -> bytes:
        length = answer.getheader("Content-Length")
        if length and length.isdigit() and int(length) > self.max_bytes:
            raise Refused(_too_large(int(length), self.max_bytes, self.reader))
        chunks: list[bytes] = []
        size = 0
        while chunk := answer.read1(65536):
            size += len(chunk)
            if size > self.max_bytes:
                raise Refused(_too_large(size, self.max_bytes, self.reader, more=True))
            chunks.append(chunk)
        answer.close()  # read whole: the connection may take the next request
        return b"".join(chunks)

    def _connection(self, seconds: float) -> http.client.HTTPConnection:
        connection = getattr(self.local, "connection", None)
        if connection is None:
            kind = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
            connection = kind(self.hostname, self.port, timeout=seconds)
            if self.address is not None:
                setattr(connection, "_create_connection", partial(_connect_to, self.address))  # noqa: B010
            self.local.connection = connection
            with self.lock:
                self.open.add(connection)
        connection.timeout = seconds  # each socket operation: never past the deadline
        if connection.sock is not None:
            connection.sock.settimeout(seconds)
        return connection

    def _drop(self, connection: http.client.HTTPConnection) -> None:
        connection.close()
        self.local.connection = None
        with self.lock:
            self.open.discard(connection)


def _connect_to(address: str, where: tuple[str, int], *args: Any) -> socket.socket:
    """socket.create_connection to `address` in place of the host name in `where`."""
    return socket.create_connection((address, where[1]), *args)


def _cut(connection: http.client.HTTPConnection, cut: threading.Event | None) -> None:
    if cut is not None:
        cut.set()
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _too_large(size: int, cap: int, reader: str, more: bool = False) -> str:
    over = "over " if more else ""
    return (
        f"its answer is {over}{size / 1e6:.1f} MB, more than the {cap / 1e6:g} MB this site "
        f"reads from {reader}"
    )
