"""Keeping a GPU busy from the CPU (docs/performance.md, issue 15).

- The next chunks are prepared (tokenised, sorted and padded with numpy) while the device runs
  the current one, and a thread copies them into pinned memory. On CUDA they are tokenised in
  another process: on a thread, for a model as small as MiniLM in fp16, tokenising took the
  GIL from the thread that launches the kernels (benchmarks/README.md).
- Inputs go to the device with non-blocking copies.
- Results come back a group of batches at a time, one group late: the copy of group k is
  queued behind its kernels, and the CPU reads group k - 1 meanwhile, so it never waits on
  the GPU while it still has work to queue.
- Attention runs on kernels that need no per-shape planning (no cuDNN attention, whose first
  pass over each new batch width took 4-13 s), and widths are rounded up to a multiple of 8 on
  CUDA so that fewer shapes occur and the tensor cores see aligned sizes.
- fp32 matmuls use TF32 on CUDA.

On the CPU the same code runs with groups of one batch and no pinning.
"""

import logging
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

GROUP = 16  # batches read back together on CUDA
IN_PROCESS = {"cuda"}  # devices whose inputs are tokenised in another process
# The tokenising process's threads: on 16 cores, 8 fed MiniLM fp16 at 7,576 texts/s, 14 at
# 6,350 (they took cores from the thread that launches the kernels) and 4 at 4,730.
TOKENISER_THREADS = max(1, (os.cpu_count() or 1) // 2)


def width_multiple(device: str) -> int:
    return 8 if device == "cuda" else 1


def pad_rows(
    rows: Sequence[Sequence[int]], value: int, multiple: int = 1, width: int = 0
) -> np.ndarray:
    """Rows of ids as one int64 array, padded on the right to `width`, or else to the longest
    row rounded up to a multiple of `multiple`."""
    if not width:
        longest = max(len(row) for row in rows)
        width = -(-longest // multiple) * multiple
    out = np.full((len(rows), width), value, dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def length_mask(lengths: Sequence[int] | np.ndarray, width: int) -> np.ndarray:
    """1 for each row's first `length` positions, 0 for its padding."""
    return (np.arange(width) < np.asarray(lengths)[:, None]).astype(np.int64)


def pad_encoding(
    encoded: Any, rows: Sequence[int], tokenizer: Any, multiple: int
) -> dict[str, np.ndarray]:
    """The tokenizer's ids, mask and token types of `rows`, padded with numpy."""
    pads = {
        "input_ids": tokenizer.pad_token_id or 0,
        "attention_mask": 0,
        "token_type_ids": tokenizer.pad_token_type_id,
    }
    return {
        key: pad_rows([encoded[key][i] for i in rows], pad, multiple)
        for key, pad in pads.items()
        if key in encoded
    }


def host_tensors(arrays: dict[str, np.ndarray], device: str) -> dict[str, Any]:
    """Arrays as CPU tensors, pinned when they are bound for CUDA (done on the preparing
    thread, so the copy to the device can be asynchronous)."""
    import torch

    tensors = {key: torch.from_numpy(value) for key, value in arrays.items()}
    if device == "cuda":
        tensors = {key: value.pin_memory() for key, value in tensors.items()}
    return tensors


def on_device(tensors: dict[str, Any], device: str) -> dict[str, Any]:
    return {key: value.to(device, non_blocking=True) for key, value in tensors.items()}


def ahead(jobs: Iterable[Callable[[], Any]], depth: int = 2) -> Iterator[Any]:
    """Each job's result in order, computed on one thread up to `depth` jobs ahead."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="prepare") as pool:
        pending: list[Any] = []
        for job in jobs:
            pending.append(pool.submit(job))
            if len(pending) > depth:
                yield pending.pop(0).result()
        for future in pending:
            yield future.result()


def tokenising_process(device: str) -> ProcessPoolExecutor | None:
    """A process to tokenise in, for the devices in IN_PROCESS; None (tokenise on a thread)
    for the others, in a daemonic process (a Celery prefork child), which may not start
    processes, and where the system refuses one. It starts with `spawn`, a clean interpreter,
    since the parent may hold CUDA and threads."""
    if device not in IN_PROCESS or multiprocessing.current_process().daemon:
        return None
    try:
        process = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_tokeniser_threads,
            initargs=(TOKENISER_THREADS,),
        )
        process.submit(int)  # starts it now, while the caller loads its model
    except OSError as error:  # no /dev/shm for its semaphores, no processes left, ...
        logger.warning("Tokenising on a thread: no process could start (%s).", error)
        return None
    return process


def _tokeniser_threads(count: int) -> None:
    os.environ["RAYON_NUM_THREADS"] = str(count)  # read by the tokenizer's first parallel call
    # A process that has run a transformers pipeline passes on "false", which made tokenising
    # 6x slower; this process is spawned, not forked, so its threads are safe.
    os.environ["TOKENIZERS_PARALLELISM"] = "true"


Batches = list[tuple[np.ndarray, dict[str, Any]]]  # [(the examples' indices, tensors)]


def prepared(
    encode: Callable[[Any], Batches],
    chunks: Iterable[tuple[int, Any]],
    device: str,
    process: ProcessPoolExecutor | None = None,
) -> Iterator[Batches]:
    """Each (start, chunk)'s batches as host tensors, in order, with indices offset by the
    start: `encode` runs a few chunks ahead of the device, in `process` when given (it must
    then pickle), else on a thread, which also pins the arrays for the device."""

    def job(start: int, chunk: Any) -> Callable[[], Batches]:
        future = process.submit(encode, chunk) if process else None

        def done() -> Batches:
            batches = future.result() if future else encode(chunk)
            return [(rows + start, host_tensors(arrays, device)) for rows, arrays in batches]

        return done

    return ahead(job(start, chunk) for start, chunk in chunks)


# Attention kernels that need no per-shape planning (cuDNN's planned each new batch width)
ATTENTION: tuple[str, ...] = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH")


@contextmanager
def inference(device: str) -> Iterator[None]:
    """inference_mode; on CUDA, with ATTENTION's kernels and TF32 matmuls in fp32 (the
    predictions stayed identical on the 19,520 IMDb texts: benchmarks/README.md)."""
    import torch

    if device != "cuda":
        with torch.inference_mode():
            yield
        return
    from torch.nn.attention import SDPBackend, sdpa_kernel

    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        with torch.inference_mode(), sdpa_kernel([getattr(SDPBackend, b) for b in ATTENTION]):
            yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32


class Readback:
    """Device outputs read back in groups, one group late. `finish(meta, arrays)` gets each
    batch's metadata and its outputs as numpy arrays, in the order they were added."""

    def __init__(self, device: str, finish: Callable[[Any, tuple[np.ndarray, ...]], None]):
        self.device = device
        self.finish = finish
        self.every = GROUP if device == "cuda" else 1
        self.group: list[tuple[Any, tuple[Any, ...]]] = []
        self.in_flight: list[tuple[Any, tuple[Any, ...]]] = []
        self.event: Any = None

    def add(self, meta: Any, *outputs: Any) -> None:
        self.group.append((meta, outputs))
        if len(self.group) >= self.every:
            self._flush()

    def close(self) -> None:
        self._flush()
        self._collect()

    def _flush(self) -> None:
        """Queue the group's copies to pinned host memory, then read the previous group."""
        import torch

        if not self.group:
            return
        copied = []
        for meta, outputs in self.group:
            if self.device == "cuda":
                hosts = tuple(torch.empty(o.shape, dtype=o.dtype, pin_memory=True) for o in outputs)
                for host, output in zip(hosts, outputs, strict=True):
                    host.copy_(output, non_blocking=True)
                outputs = hosts
            copied.append((meta, outputs))
        event = None
        if self.device == "cuda":
            event = torch.cuda.Event()
            event.record()
        self._collect()
        self.in_flight, self.event, self.group = copied, event, []

    def _collect(self) -> None:
        if self.event is not None:
            self.event.synchronize()
        for meta, outputs in self.in_flight:
            self.finish(meta, tuple(o.numpy() for o in outputs))
        self.in_flight, self.event = [], None
