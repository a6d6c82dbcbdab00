"""A real OpenAI-compatible server for the tests: llama-cpp-python's, serving a tiny Llama with
random weights that the tests write as GGUF (no hub), and a counting proxy in front of it that
can drop connections, as a server that restarts does."""

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.evaluation.llm import bpe_tokenizer


def write_gguf(
    path: Path,
    tokenizer: Any = None,
    layers: int = 2,
    width: int = 64,
    heads: int = 4,
    *,
    add_bos: bool = True,
    chosen: tuple[str, ...] = (),
) -> Path:
    """A Llama-architecture model with random weights and a byte-level BPE tokenizer (the
    tests' own unless another fast tokenizer is given). `add_bos`: whether the model's prompts
    begin with BOS (llama-cpp-python's echo is shifted by a token without one). `chosen`:
    tokens that rank first after any text, their values still varying with it: the residual's
    last dimension is held at 16 (the embeddings' last column 16, nothing written to it by the
    blocks) and only the chosen tokens' output rows weigh it."""
    import gguf
    import numpy as np

    tokenizer = tokenizer or bpe_tokenizer(add_bos=False)
    model = json.loads(tokenizer.backend_tokenizer.to_str())["model"]
    vocab = sorted(model["vocab"].items(), key=lambda item: item[1])
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    specials = set(tokenizer.all_special_tokens)
    rng = np.random.default_rng(0)

    def weight(*shape: int) -> "np.ndarray":
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(4096)
    writer.add_embedding_length(width)
    writer.add_block_count(layers)
    writer.add_feed_forward_length(width * 2)
    writer.add_head_count(heads)
    writer.add_head_count_kv(heads)
    writer.add_rope_dimension_count(width // heads)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list([token for token, _ in vocab])
    writer.add_token_types(
        [gguf.TokenType.CONTROL if t in specials else gguf.TokenType.NORMAL for t, _ in vocab]
    )
    writer.add_token_merges(merges)
    writer.add_bos_token_id(tokenizer.bos_token_id)
    writer.add_eos_token_id(tokenizer.eos_token_id)
    writer.add_add_bos_token(add_bos)
    n = len(vocab)
    embedding = weight(n, width)
    if chosen:
        embedding[:, -1] = 16.0
    writer.add_tensor("token_embd.weight", embedding)
    for i in range(layers):
        for name, shape in (
            ("attn_q", (width, width)), ("attn_k", (width, width)), ("attn_v", (width, width)),
            ("attn_output", (width, width)), ("ffn_gate", (width * 2, width)),
            ("ffn_up", (width * 2, width)), ("ffn_down", (width, width * 2)),
        ):  # fmt: skip
            tensor = weight(*shape)
            if chosen and name in ("attn_output", "ffn_down"):
                tensor[-1, :] = 0.0  # nothing is added to the last dimension
            writer.add_tensor(f"blk.{i}.{name}.weight", tensor)
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(width, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(width, dtype=np.float32))
    writer.add_tensor("output_norm.weight", np.ones(width, dtype=np.float32))
    output = weight(n, width)
    if chosen:
        ids = dict(vocab)
        output[:, -1] = 0.0
        for token in chosen:
            output[ids[token], -1] = 16.0
    writer.add_tensor("output.weight", output)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """`python -m llama_cpp.server` on a free port of 127.0.0.1; start() waits until it
    answers, stop() kills it; the port stays the same across restarts."""

    def __init__(
        self, model: Path, alias: str = "tiny-llama", threads: int = 1, logits_all: bool = True
    ):
        self.model, self.alias, self.port, self.threads = model, alias, free_port(), threads
        self.logits_all = logits_all
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "LlamaServer":
        self.process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model),
             "--model_alias", self.alias, "--host", "127.0.0.1", "--port", str(self.port),
             "--logits_all", str(self.logits_all).lower(), "--n_ctx", "4096",
             "--n_threads", str(self.threads)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{self.url}/v1/models", timeout=1).read()
                return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if self.process.poll() is not None:
                    raise RuntimeError("llama_cpp.server exited at start") from None
                time.sleep(0.2)
        raise RuntimeError("llama_cpp.server did not answer within 60 s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


# The proxy's own requests go straight to the server, whatever proxy the environment names (a
# test sets one to show that the product ignores it).
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class CountingProxy:
    """Forwards every request to `target` and counts the prompts it was asked for; while
    `down` is set it drops each connection without an answer, as a restarting server."""

    def __init__(self, target: str):
        self.target, self.down = target, threading.Event()
        self.answered: Counter[str] = Counter()  # prompts the server answered, by prompt
        self.refused = 0  # connections dropped
        self.keys: set[str] = set()  # the Authorization headers seen
        self.on_answer: Any = None  # called after each answer (a test's outage)
        self.usage: Counter[str] = Counter()  # the tokens the server said it used
        self.rewrite: Any = None  # (the body sent, the answer's JSON) -> the JSON passed on
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._forward(None)

            def do_POST(self) -> None:
                self._forward(self.rfile.read(int(self.headers["Content-Length"])))

            def _forward(self, body: bytes | None) -> None:
                if proxy.down.is_set():
                    proxy.refused += 1
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                proxy.keys.add(self.headers.get("Authorization", ""))
                request = urllib.request.Request(
                    proxy.target + self.path, data=body, method=self.command,
                    headers={"Content-Type": "application/json"},
                )  # fmt: skip
                try:
                    with DIRECT.open(request, timeout=60) as answer:
                        status, data = answer.status, answer.read()
                except urllib.error.HTTPError as error:
                    status, data = error.code, error.read()
                except (urllib.error.URLError, ConnectionError):  # the server went away
                    self.close_connection = True
                    return
                if body and status == 200:
                    sent = json.loads(body)
                    proxy.answered[json.dumps(sent.get("prompt") or sent.get("messages"))] += 1
                    proxy.usage.update(json.loads(data).get("usage") or {})
                if body and status == 200 and proxy.rewrite:  # a server that answers otherwise
                    data = json.dumps(proxy.rewrite(json.loads(body), json.loads(data))).encode()
                if proxy.on_answer:  # before the answer goes out, so that the client's next
                    proxy.on_answer(proxy)  # request already meets the outage it starts
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
