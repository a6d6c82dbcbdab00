"""A hostile model server for the tests: a real HTTP server on 127.0.0.1 that answers its model
list honestly and then each completion as the test says (slowly, endlessly, hugely, or with
JSON no honest server sends), and notes whether its client hung up before it was done."""

import json
import socket
import socketserver
import threading
import time
from typing import Any

MODEL = "hostile"


class HostileServer:
    """`mode` decides the answers to POSTs (and to GET /models when `models_too`):
    "slow-headers" (the status line a byte at a time), "slow-body" (honest headers, then the body
    a byte at a time), "endless" (a body without end, fast), "huge" (says 300 MB), "json"
    (`payload`, at once). The drip never ends before `give_up` seconds."""

    def __init__(self, mode: str = "json", payload: Any = None, *, models_too: bool = False):
        self.mode, self.payload, self.models_too = mode, payload, models_too
        self.drip, self.give_up = 0.3, 30.0
        self.hung_up = threading.Event()  # the client closed before the answer was whole
        self.asked = threading.Event()  # a request that gets the hostile answer arrived
        server = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                while True:
                    request = self.rfile.readline()
                    if not request:
                        return
                    length = 0
                    while (line := self.rfile.readline()) not in (b"\r\n", b""):
                        name, _, value = line.decode().partition(":")
                        if name.lower() == "content-length":
                            length = int(value)
                    self.body = self.rfile.read(length)  # what a test's `answer` may read
                    listing = request.startswith(b"GET") and request.split()[1].endswith(b"/models")
                    try:
                        if listing and not server.models_too:
                            self._send(200, {"data": [{"id": MODEL}]})
                        else:
                            server.asked.set()
                            server.answer(self)
                            return
                    except OSError:
                        server.hung_up.set()
                        return

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.wfile.write(
                    f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(data)}\r\n\r\n".encode()
                    + data
                )

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def answer(self, handler: Any) -> None:
        out, ends = handler.wfile, time.monotonic() + self.give_up
        if self.mode == "json":
            data = json.dumps(self.payload).encode()
            out.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(data) + data)
            return
        if self.mode == "huge":
            out.write(b"HTTP/1.1 200 OK\r\nContent-Length: 300000000\r\n\r\n")
            while time.monotonic() < ends:
                out.write(b"{" * 65536)
            return
        if self.mode == "slow-headers":
            head = b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10_000
        elif self.mode == "slow-body":
            head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n" + b" " * 1_000_000
        else:  # endless, fast, no length
            out.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
            while time.monotonic() < ends:
                out.write(b"[" * 65536)
            return
        for n in range(len(head)):
            if time.monotonic() > ends:
                return
            out.write(head[n : n + 1])
            out.flush()
            time.sleep(self.drip)
            # A peer that hung up shows on a later write; probe it now.
            handler.connection.setblocking(False)
            try:
                if handler.connection.recv(1, socket.MSG_PEEK) == b"":
                    raise ConnectionResetError
            except BlockingIOError:
                pass
            finally:
                handler.connection.setblocking(True)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
