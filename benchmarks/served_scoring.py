"""Served models' label scoring against what it cost before (issue 60, item 1), in one run per
dataset: requests and prompt tokens per example, and examples per second, against the same
llama-cpp-python server (`python -m llama_cpp.server --logits_all true`, one request at a
time), serving a Llama with random weights written as GGUF (no hub) and a byte-level BPE
trained on the dataset's texts, in which each label's word is one token and (as a trained
model's would) ranks among the likeliest next tokens (`--random-ranks`: as the weights fall).

- ours: `run_evaluation` of an `openai-compatible` run, from the start of the task to
  `succeeded` (the Check, reading the release, every answer stored, predictions, metrics): one
  request per example where every label is one token (the next token's top list);
- before: the requests the product sent until this round, one per example and label (the
  prompt and the label, `echo`), by `requests` sessions in a thread pool of the same size,
  answers only parsed, nothing stored: a lower bound of its time;
- lm-eval: lm-evaluation-harness's `gguf` backend on the release's own `lm_eval/` task, on the
  same server (`--lm-eval`).

Datasets, as published (Gardner et al., 2020): IMDb (2 labels), MATRES (4 labels). The three
alternate in each round, so that a change of load shows in all.

    cd benchmarks && ../.venv/bin/python served_scoring.py [--sets 30] [--concurrency 4]
        [--width 128] [--layers 2] [--threads 1] [--vocab 1000] [--rounds 2] [--lm-eval]
"""

import argparse
import csv
import json
import os
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

os.environ.setdefault("BENCH_DB", "contrastlab_served")  # before seed reads it
from common import ROOT, require_data
from seed import bench_database

sys.path.insert(0, str(ROOT))

DATASETS = {  # the published files, the prompt, and how to read the texts for the tokenizer
    "imdb": (("imdb-contrast", "test_original.tsv"), ("imdb-contrast", "test_contrast.tsv")),
    "matres": (("gardner-contrast-sets", "Platinum_subset_minimal_pairs.csv"),),
}
PROMPTS = {"imdb": "Review: {text}\nSentiment:", "matres": "Text: {text}\nRelation:"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", type=int, default=30)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="the server's CPU threads")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--datasets", default="imdb,matres")
    parser.add_argument("--lm-eval", action="store_true", help="also lm-eval's gguf backend")
    parser.add_argument(
        "--random-ranks", dest="chosen", action="store_false",
        help="leave the labels' ranks to the random weights (most then fall back to echo)",
    )  # fmt: skip
    parser.add_argument(
        "--vocab", type=int, default=1000,
        help="the BPE's words: llama-cpp-python's server sorts the vocabulary in Python for "
        "every echoed token, so its cost per request grows with it",
    )  # fmt: skip
    args = parser.parse_args()
    files = {name: [require_data(*parts) for parts in DATASETS[name]]
             for name in args.datasets.split(",")}  # fmt: skip
    bench_database(fresh=True)
    import django

    django.setup()
    for name, paths in files.items():
        measure(name, paths, args)


def measure(name: str, paths: list[Path], args: argparse.Namespace) -> None:
    from annotation.releases.bundle import read_examples
    from evaluation.runs.prompting import prompts
    from tests.evaluation.served import LlamaServer, write_gguf

    release = published_release(name, paths, args.sets)
    labels = release.project.labels
    folder = Path(tempfile.mkdtemp(prefix="served-bench-"))
    bpe = tokenizer([*texts_of(paths), " ".join(labels * 2000)], args.vocab)
    # A trained model ranks a prompt's labels among its likeliest next tokens; a random one
    # does not, so the labels' tokens are made to (tests/evaluation/served.py: write_gguf).
    chosen = tuple(bpe.convert_ids_to_tokens(bpe(" " + label)["input_ids"])[0] for label in labels)
    model = write_gguf(folder / "bench.gguf", bpe, args.layers, args.width, 4,
                       chosen=chosen if args.chosen else ())  # fmt: skip
    server = LlamaServer(model, threads=args.threads).start()
    try:
        spec = served_spec(release, server.url, args.concurrency)
        examples = read_examples(release, "test")
        texts = prompts(spec, release, examples)
        before = [echo_body(prompt + " " + label) for prompt in texts for label in labels]
        print(f"{name}: {len(examples)} examples, {len(labels)} labels, concurrency "
              f"{args.concurrency}, model {args.layers}x{args.width}, server threads "
              f"{args.threads}, load {os.getloadavg()[0]:.1f}")  # fmt: skip
        rates: dict[str, list[float]] = {"before": [], "ours": [], "lm-eval": []}
        for round_ in range(args.rounds):
            seconds, tokens = plain(server.url, before, args.concurrency)
            rates["before"].append(len(examples) / seconds)
            run, seconds = ours(release, spec)
            rates["ours"].append(len(examples) / seconds)
            if args.lm_eval:
                rates["lm-eval"].append(len(examples) / lm_eval_gguf(run, server.url, folder))
            usage = run.metrics["usage"]
            print(f"round {round_ + 1}: before {rates['before'][-1]:.2f} ex/s, ours "
                  f"{rates['ours'][-1]:.2f} ex/s ({rates['ours'][-1] / rates['before'][-1]:.2f}x)"
                  + (f", lm-eval gguf {rates['lm-eval'][-1]:.2f} ex/s "
                     f"({rates['ours'][-1] / rates['lm-eval'][-1]:.2f}x)" if args.lm_eval else "")
                  + f"; requests per example: before {len(before) / len(examples):.2f}, ours "
                  f"{usage['requests'] / len(examples):.2f} (the Check's included); prompt "
                  f"tokens per example: before {tokens / len(examples):.0f}, ours "
                  f"{usage['prompt_tokens'] / len(examples):.0f} "
                  f"({usage['prompt_tokens'] / tokens:.3f}x); read by "
                  f"{run.metrics['server']['path']} (load {os.getloadavg()[0]:.1f})")  # fmt: skip
    finally:
        server.stop()


def texts_of(paths: list[Path]) -> list[str]:
    texts = []
    for path in paths:
        with path.open(newline="", encoding="utf-8") as handle:
            delimiter = "\t" if path.suffix == ".tsv" else ","
            texts += [" ".join(row.values()) for row in csv.DictReader(handle, delimiter=delimiter)]
    return texts


def echo_body(prompt: str) -> dict:  # type: ignore[type-arg]
    return {"model": "tiny-llama", "prompt": prompt, "echo": True, "logprobs": 1,
            "max_tokens": 1, "temperature": 0}  # fmt: skip


def tokenizer(texts: list[str], vocab: int = 8000):  # type: ignore[no-untyped-def]
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts, vocab_size=vocab, special_tokens=["<|endoftext|>"])
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
    )  # fmt: skip


def published_release(name: str, paths: list[Path], sets: int):  # type: ignore[no-untyped-def]
    """A published dataset's sets (accepted), the first `sets` lines of each file, released."""
    from annotation.imports.published.services import import_published
    from annotation.models import Project
    from annotation.releases.services import release_create

    def head(path: Path) -> bytes:
        return b"".join(path.read_bytes().splitlines(keepends=True)[: sets + 1])

    import_published(dataset=name, files=[(p.name, head(p)) for p in paths], user=None,
                     project=None, slug=name, accept=True)  # fmt: skip
    project = Project.objects.get(slug=name)
    project.settings = {**project.settings, "prompt": PROMPTS[name]}
    project.save(update_fields=["settings"])
    return release_create(project=project, user=None, version="1")


def served_spec(release, url: str, concurrency: int):  # type: ignore[no-untyped-def]
    from evaluation.models import ModelSpec

    return ModelSpec.objects.create(
        project=release.project, name="served", kind="openai-compatible", source="tiny-llama",
        base_url=f"{url}/v1", concurrency=concurrency,
    )  # fmt: skip


def plain(url: str, bodies: list, concurrency: int) -> tuple[float, int]:  # type: ignore[type-arg]
    """Seconds to send every body, and the prompt tokens the server counted."""
    import threading

    import requests

    local = threading.local()

    def send(body) -> int:  # type: ignore[no-untyped-def]
        session = getattr(local, "session", None) or requests.Session()
        local.session = session
        answer = session.post(f"{url}/v1/completions", data=json.dumps(body), timeout=600,
                              headers={"Content-Type": "application/json"})  # fmt: skip
        answer.raise_for_status()
        return int(answer.json()["usage"]["prompt_tokens"])

    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        tokens = sum(pool.map(send, bodies))
    return time.perf_counter() - started, tokens


def ours(release, spec):  # type: ignore[no-untyped-def]
    from evaluation.models import EvaluationRun
    from evaluation.runs.execute import run_evaluation

    run = EvaluationRun.objects.create(release=release, model=spec, split="test")
    started = time.perf_counter()
    finished = run_evaluation(run.pk)
    seconds = time.perf_counter() - started
    assert finished is not None and finished.status == "succeeded", finished and finished.error
    return finished, seconds


def lm_eval_gguf(run, url: str, folder: Path) -> float:  # type: ignore[no-untyped-def]
    """Seconds of lm-evaluation-harness's gguf backend on the release's own task."""
    import lm_eval
    from django.conf import settings

    unzipped = folder / "release"
    with zipfile.ZipFile(Path(settings.MEDIA_ROOT) / run.release.bundle) as bundle:
        bundle.extractall(unzipped)
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    task = f"contrastlab_{run.release.project.slug}_test"
    started = time.perf_counter()
    lm_eval.simple_evaluate(model="gguf", model_args=f"base_url={url}", tasks=[task],
                            task_manager=lm_eval.tasks.TaskManager(
                                include_path=str(unzipped / "lm_eval")))  # fmt: skip
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
