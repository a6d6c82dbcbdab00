"""A served model's run against a plain client, on the same server, requests and concurrency, in
one run (issue 46: the run reaches at least 0.9x the plain client's throughput, so the server,
not ContrastLab, is the limit).

The server is llama-cpp-python's OpenAI-compatible one (`python -m llama_cpp.server`, with
`--logits_all true`), serving a Llama with random weights written as GGUF (no hub) and a
byte-level BPE trained on the reviews. The release is the IMDb contrast sets (Gardner et al.,
2020) imported as published: each test original and its contrast, scored by log-likelihood of
the two labels (2 requests per example).

- ours: `run_evaluation` of an `openai-compatible` run, from the start of the task to
  `succeeded` (reading the release, every answer stored as it arrives, predictions, metrics);
- plain: the same request bodies sent by `requests` sessions in a thread pool of the same size,
  answers only parsed, nothing stored.

The two alternate (plain, ours, plain, ours), so that a change of load shows in both.

    cd benchmarks && ../.venv/bin/python served_scoring.py [--sets 488] [--concurrency 4]
        [--width 256] [--layers 4] [--threads 1] [--vocab 1000]
"""

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

os.environ.setdefault("BENCH_DB", "contrastlab_served")  # before seed reads it
from common import ROOT, read_tsv, require_data
from seed import bench_database

sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", type=int, default=488)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1, help="the server's CPU threads")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--vocab", type=int, default=1000,
        help="the BPE's words: llama-cpp-python's server sorts the vocabulary in Python for "
        "every echoed token, so its cost per request grows with it",
    )  # fmt: skip
    args = parser.parse_args()

    originals = require_data("imdb-contrast", "test_original.tsv")
    contrasts = require_data("imdb-contrast", "test_contrast.tsv")
    bench_database(fresh=True)
    import django

    django.setup()
    from tests.evaluation.served import LlamaServer, write_gguf

    release = published_release(originals, contrasts, args.sets)
    texts = [row["Text"] for row in read_tsv(originals)]
    folder = Path(tempfile.mkdtemp(prefix="served-bench-"))
    bpe = tokenizer(texts, args.vocab)
    model = write_gguf(folder / "bench.gguf", bpe, args.layers, args.width, 4)
    server = LlamaServer(model, threads=args.threads).start()
    try:
        spec = served_spec(release, server.url, args.concurrency)
        from annotation.releases.bundle import read_examples
        from evaluation.runs.served import requests_of

        examples = read_examples(release, "test")
        bodies = [r for requests in requests_of(spec, release, examples) for r in requests]
        print(f"{len(examples)} examples, {len(bodies)} requests, concurrency "
              f"{args.concurrency}, model {args.layers}x{args.width}, server threads "
              f"{args.threads}, load {os.getloadavg()[0]:.1f}")  # fmt: skip
        plain_rates, our_rates = [], []
        for round_ in range(args.rounds):
            seconds = plain(server.url, bodies, args.concurrency)
            plain_rates.append(len(examples) / seconds)
            seconds = ours(release, spec)
            our_rates.append(len(examples) / seconds)
            print(f"round {round_ + 1}: plain {plain_rates[-1]:.1f} ex/s, ours "
                  f"{our_rates[-1]:.1f} ex/s, ratio {our_rates[-1] / plain_rates[-1]:.3f} "
                  f"(load {os.getloadavg()[0]:.1f})")  # fmt: skip
        print(f"best: plain {max(plain_rates):.1f} ex/s, ours {max(our_rates):.1f} ex/s, ratio "
              f"{max(our_rates) / max(plain_rates):.3f}")  # fmt: skip
    finally:
        server.stop()


def tokenizer(texts: list[str], vocab: int = 8000):  # type: ignore[no-untyped-def]
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts, vocab_size=vocab, special_tokens=["<|endoftext|>"])
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
    )  # fmt: skip


def published_release(originals: Path, contrasts: Path, sets: int):  # type: ignore[no-untyped-def]
    """The IMDb test sets as published (accepted), the first `sets` of them, released."""
    from annotation.imports.published.services import import_published
    from annotation.models import Project
    from annotation.releases.services import release_create

    def head(path: Path) -> bytes:
        return b"".join(path.read_bytes().splitlines(keepends=True)[: sets + 1])

    import_published(dataset="imdb", files=[(p.name, head(p)) for p in (originals, contrasts)],
                     user=None, project=None, slug="imdb", accept=True)  # fmt: skip
    project = Project.objects.get(slug="imdb")
    project.settings = {**project.settings, "prompt": "Review: {text}\nSentiment:"}
    project.save(update_fields=["settings"])
    return release_create(project=project, user=None, version="1")


def served_spec(release, url: str, concurrency: int):  # type: ignore[no-untyped-def]
    from evaluation.models import ModelSpec

    return ModelSpec.objects.create(
        project=release.project, name="served", kind="openai-compatible", source="tiny-llama",
        base_url=f"{url}/v1", concurrency=concurrency,
    )  # fmt: skip


def plain(url: str, bodies: list, concurrency: int) -> float:  # type: ignore[type-arg]
    import threading

    import requests

    local = threading.local()

    def send(request) -> float:  # type: ignore[no-untyped-def]
        session = getattr(local, "session", None) or requests.Session()
        local.session = session
        answer = session.post(
            f"{url}/v1{request.path}", data=json.dumps(request.body), timeout=600,
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        answer.raise_for_status()
        return float(sum(v for v in answer.json()["choices"][0]["logprobs"]["token_logprobs"][1:]))

    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(send, bodies))
    return time.perf_counter() - started


def ours(release, spec) -> float:  # type: ignore[no-untyped-def]
    from evaluation.models import EvaluationRun
    from evaluation.runs.execute import run_evaluation

    run = EvaluationRun.objects.create(release=release, model=spec, split="test")
    started = time.perf_counter()
    finished = run_evaluation(run.pk)
    seconds = time.perf_counter() - started
    assert finished is not None and finished.status == "succeeded", finished and finished.error
    return seconds


if __name__ == "__main__":
    main()
