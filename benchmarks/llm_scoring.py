"""Prompted-LLM scoring of a classification release: ContrastLab's runner against
lm-evaluation-harness's `hf` backend on the same examples, model, prompt and batch size, in one
run. Prints both throughputs, their ratio, and whether every choice is the same.

The examples are the IMDb contrast sets (Gardner et al., 2020): the test originals and their
contrasts, as full reviews, repeated to `--examples` with each repeat numbered, so that every
context is distinct (the harness computes a repeated context once). The harness reads them from
the lm_eval/ task folder that a release writes (annotation.releases.exports), here written
straight from the TSVs. There is no hub, so the model has random weights and a byte-level BPE
tokenizer trained on the reviews; throughput does not depend on the weights. Shapes: `small`,
GPT-2 with 6 layers of 256 and the BPE's 8,000 words; `vocab150k`, Qwen2 with 4 layers of 256
and a head of 150,000 rows, an LLM's (Qwen2.5 has 151,936): the tokenizer is still the BPE, so
token ids never reach the upper rows, but every row is computed; `qwen-0.5b`, Qwen2.5-0.5B's
body with the BPE's vocabulary.

Where the time goes (cProfile and torch.profiler, 2026-11-26, 2 cores shared, load 3-5). Ours,
160 examples: the model's forward over the prompts is 97% (small 23.6 of 24.2 s, vocab150k 22.4
of 23.2 s), tokenising 0.5-0.6 s, the log-softmax of the one position each example needs under
0.1 s. The harness's loglikelihood, small, 160 examples: 24.1 s = the same forward 19.2 s + the
head at every position 3.3 s + a log-softmax over every position 1.1 s + 0.4 s; vocab150k, 64
examples: 77.9 s = forward 9.0 s + head 35.7 s + log-softmax 31.1 s + 2.1 s. It also builds an
index of all its tasks (YAML) once, ~20 s. So at 8,000 words the harness does ~1.25x our work
per example, the bound of the ratio at scale (2x would take less than the model's forward over
each prompt, which both runners do); at 150,000 words the vocabulary is 86% of its time. The
one other difference: our left padding needs an attention mask (attention and mask ~7% of our
time), the harness's right padding none.

Figures, CPU fp32, batch 16, same choices in every run, largest log-likelihood gap <= 1.9e-6.
The machine was shared (load average at start and end of each run), so one run's two halves may
have seen different loads:

    vocab150k    976: ours 10.0 ex/s, harness 1.4 ex/s, 7.05x (load 1.2 -> 4.3)
    vocab150k    976: ours 14.0 ex/s, harness 2.5 ex/s, 5.72x (load 3.2 -> 3.8)
    vocab150k  9,760: ours 7.4 ex/s (load 4.2 -> 4.9), with --skip-harness: the harness would
                      take 1-2 h; its work is linear in examples, and its pace at 976
                      (1.4-2.5 ex/s) gives 3-5x
    small        976: ours 10.6 ex/s, harness 8.1 ex/s, 1.31x (load 3.0 -> 4.2)
    small        976: ours 34.1 ex/s, harness 19.7 ex/s, 1.72x (load 3.8 -> 2.4)
    small      9,760: ours 7.8 ex/s, harness 9.3 ex/s, 0.84x (load 4.9 -> 3.2; ours ran under
                      5-6, the harness under 3-4)

Where the runner's own time goes (issue 46, part 3), printed after the pass above, warm:
tokenising alone, in batches as the runner does and one request at a time as it did before (the
same ids, checked); the runner's own kernels (`_causal_inputs` and `_causal_scores` over the
same units, pre-tokenised and already on the device: its ceiling); the runner end to end; and
with `--as-before` (always on CUDA) the runner with every example tokenised before its first
batch, in batches and one request at a time. On an H100 (bf16, qwen-0.5b), tokenising one
request at a time was 55-80% of the warm time. CPU, small, 976 examples, 2 cores shared (load
2.5 -> 5.3), 2026-11-27: tokenising 1.38x and 1.51x faster (517-521 against 344-375
examples/s; in CPU seconds, one tokenizer thread, 1.35-1.77x less work: three texts an example
instead of four), and the runner end to end 0.94-0.97x its kernels' time (83-88 s against
89-90 s, under that load), so on a CPU tokenising is noise.

`--reviews FILE` reads the reviews from a JSON file that `--save-reviews FILE` wrote, for a
machine without ../shared/data (a GPU's: there, also `--skip-harness`, which needs neither
Django nor lm-eval).

    .venv/bin/python benchmarks/llm_scoring.py [--examples 976] [--batch 16]
        [--shape small|vocab150k|qwen-0.5b] [--device cpu|cuda] [--precision fp32|bf16]
        [--skip-harness] [--as-before] [--reviews FILE] [--save-reviews FILE]
"""

import argparse
import json
import os
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from common import OUT, ROOT, read_tsv, require_data

sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
# TOKENIZERS_PARALLELISM is left as a worker has it (unset: the tokenizer's threads on).
os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")

PROMPT = "Review: {text}\nSentiment:"
LABELS = ["negative", "positive"]


def build_model(texts: list[str], shape: str) -> str:
    """A random model of `shape` with a BPE tokenizer trained on the texts (once, cached)."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import AutoModelForCausalLM, GPT2Config, PreTrainedTokenizerFast, Qwen2Config

    directory = OUT / f"llm-{shape}-random"
    if (directory / "config.json").exists():
        return str(directory)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts, vocab_size=8000, special_tokens=["<|endoftext|>"])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
        pad_token="<|endoftext|>", model_max_length=1024,
    )  # fmt: skip
    torch.manual_seed(0)
    config: Any
    if shape == "small":  # GPT-2 with 6 layers of 256: a few million weights
        config = GPT2Config(vocab_size=len(tokenizer), n_layer=6, n_embd=256, n_head=8,
                            bos_token_id=0, eos_token_id=0)  # fmt: skip
    elif shape == "vocab150k":  # Qwen2 with 4 layers of 256 and an LLM's 150,000-row head
        config = Qwen2Config(
            vocab_size=150_000, hidden_size=256, intermediate_size=1024, num_hidden_layers=4,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
            bos_token_id=0, eos_token_id=0, tie_word_embeddings=True,
        )  # fmt: skip
    else:  # Qwen2.5-0.5B's shape, with this tokenizer's vocabulary
        config = Qwen2Config(
            vocab_size=len(tokenizer), hidden_size=896, intermediate_size=4864,
            num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
            max_position_embeddings=4096, bos_token_id=0, eos_token_id=0, tie_word_embeddings=True,
        )  # fmt: skip
    AutoModelForCausalLM.from_config(config).eval().save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def reviews(path: str | None) -> list[dict[str, str]]:
    """The IMDb contrast sets' test rows (Text, Sentiment): from ../shared/data, or from a JSON
    file that `--save-reviews` wrote, for a machine without the data (a GPU's)."""
    if path:
        rows: list[dict[str, str]] = json.loads(Path(path).read_text())
        return rows
    rows = []
    for name in ("test_original.tsv", "test_contrast.tsv"):
        rows += read_tsv(require_data("imdb-contrast", name))
    return [{"Text": r["Text"], "Sentiment": r["Sentiment"]} for r in rows]


def write_tasks(folder: Path, examples: list[dict[str, str]]) -> str:
    """The release's lm_eval/ folder for these examples, written by the release's own code."""
    import django

    django.setup()
    from annotation.models import Project
    from annotation.releases.exports import LmEvalExport, task_prefix
    from annotation.releases.files import HashingFile

    project = Project(slug="imdb-bench", task_type="classification", labels=LABELS,
                      fields=[{"name": "text", "kind": "text", "editable": True}],
                      settings={"prompt": PROMPT})  # fmt: skip
    export = LmEvalExport(project, folder, lambda name: HashingFile((folder / name).open("wb")))
    for e in examples:
        original = {"id": e["id"], "fields": {"text": e["text"]}, "label": e["label"]}
        export.add({"set_id": e["id"], "split": "test", "original": original,
                    "perturbations": []})  # fmt: skip
    export.finish(SimpleNamespace(version="bench"))  # type: ignore[arg-type]
    return f"{task_prefix(project)}_test"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=976)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--shape", choices=["small", "vocab150k", "qwen-0.5b"], default="small")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    parser.add_argument("--skip-harness", action="store_true", help="ContrastLab only")
    parser.add_argument(
        "--as-before", action="store_true", help="also the runner before issue 46 (on CUDA: always)"
    )
    parser.add_argument("--reviews", help="the reviews from this JSON file (--save-reviews)")
    parser.add_argument("--save-reviews", help="write the reviews to this JSON file, and stop")
    args = parser.parse_args()

    import numpy as np
    import torch

    rows = reviews(args.reviews)
    if args.save_reviews:
        Path(args.save_reviews).write_text(json.dumps(rows))
        return
    texts = [r["Text"] for r in rows]
    # Every context distinct, as in a real release: the harness computes a repeated context
    # once (its logits cache), so a repeat of a review is numbered.
    examples = [
        {"id": f"e{n}", "label": rows[n % len(rows)]["Sentiment"].lower(),
         "text": f"({n // len(texts)}) " * (n >= len(texts)) + texts[n % len(texts)]}
        for n in range(args.examples)
    ]  # fmt: skip
    source = build_model(texts, args.shape)
    print(f"{len(examples)} IMDb reviews x {len(LABELS)} choices; {args.shape} random "
          f"({args.device}, {args.precision}); {torch.get_num_threads()} threads; "
          f"batch {args.batch}; TOKENIZERS_PARALLELISM "
          f"{os.environ.get('TOKENIZERS_PARALLELISM', 'unset')}")  # fmt: skip

    from evaluation.runners.prompted import PromptedModel

    started = time.perf_counter()
    model = PromptedModel(
        source, seq2seq=False, device=args.device, precision=args.precision, batch_size=args.batch
    )
    contexts = [PROMPT.format(text=e["text"]) for e in examples]
    options = [" " + label for label in LABELS]
    lls = model.loglikelihoods(contexts, [options] * len(contexts))
    ours_s = time.perf_counter() - started
    ours = [LABELS[int(np.argmax(row))] for row in lls]
    tokens = sum(map(len, model.tokens.encode_many(contexts).values()))
    print(f"ContrastLab: {len(examples) / ours_s:.1f} examples/s ({ours_s:.1f} s, "
          f"{tokens / len(examples):.0f} prompt tokens per example on average; "
          f"{[len(model.split(contexts[0], o)[1]) for o in options]} tokens per choice "
          "after the first prompt)")  # fmt: skip
    as_before = args.as_before or args.device == "cuda"
    pace(model, contexts, [options] * len(contexts), args.batch, as_before)
    if args.skip_harness:
        return

    import lm_eval

    with tempfile.TemporaryDirectory() as folder:
        task = write_tasks(Path(folder), examples)
        dtype = "bfloat16" if args.precision == "bf16" else "float32"
        started = time.perf_counter()
        out = lm_eval.simple_evaluate(
            model="hf", tasks=[task], batch_size=args.batch, device=args.device,
            model_args=f"pretrained={source},dtype={dtype}",
            task_manager=lm_eval.tasks.TaskManager(include_path=folder), log_samples=True,
        )  # fmt: skip
        theirs_s = time.perf_counter() - started
    samples = {s["doc"]["id"]: s for s in out["samples"][task]}
    theirs = [
        LABELS[int(np.argmax([float(r[0]) for r in samples[e["id"]]["filtered_resps"]]))]
        for e in examples
    ]
    same = sum(a == b for a, b in zip(ours, theirs, strict=True))
    gap = max(
        abs(float(r[0]) - ll)
        for e, row in zip(examples, lls, strict=True)
        for r, ll in zip(samples[e["id"]]["filtered_resps"], row, strict=True)
    )
    print(f"lm-eval hf:  {len(examples) / theirs_s:.1f} examples/s ({theirs_s:.1f} s)")
    print(
        f"ratio: {theirs_s / ours_s:.2f}x the harness; same choices: {same}/{len(examples)}; "
        f"largest log-likelihood gap {gap:.2e}; acc {out['results'][task]['acc,none']:.4f}"
    )


def pace(
    model: Any, contexts: list[str], choices: list[list[str]], batch: int, as_before: bool
) -> None:
    """Where the runner's time goes, warm (after the pass above): tokenising alone, in batches
    as the runner does and one request at a time as it did before issue 46 (the same texts and
    ids); the runner end to end; and its own kernels over the same units, pre-tokenised and on
    the device (`_causal_inputs` and `_causal_scores`, nothing else). `as_before`: also the
    runner as it was, every example tokenised before the first batch, in batches and one at a
    time."""
    started = time.perf_counter()
    before = one_at_a_time(model, contexts, choices)
    old_s = time.perf_counter() - started
    started = time.perf_counter()
    after = model.tokens.pairs(contexts, choices)
    new_s = time.perf_counter() - started
    assert after == before, "the batched tokens differ"
    n = len(contexts)
    batched, single = f"{n / new_s:,.0f} examples/s", f"{n / old_s:,.0f} examples/s"
    print(
        f"tokenising alone: in batches {batched} ({new_s:.2f} s), one request at a time "
        f"{single} ({old_s:.2f} s): {old_s / new_s:.2f}x"
    )
    forward_s = own_forward(model, contexts, choices, batch)
    print(f"its own kernels: {n / forward_s:,.1f} examples/s ({forward_s:.2f} s)")
    runs: dict[str, dict[str, Any]] = {"runner end to end, warm": {}}
    if as_before:
        runs["  every example tokenised first"] = {"chunk": n}
        runs["  ... one request at a time (before issue 46)"] = {"chunk": n, "old": True}
    for name, change in runs.items():
        seconds = end_to_end(model, contexts, choices, batch, **change)
        rate = f"{n / seconds:,.1f} examples/s ({seconds:.2f} s)"
        print(f"{name}: {rate}, {seconds / forward_s:.2f}x its kernels' time")


def end_to_end(
    model: Any, contexts: list[str], choices: list[list[str]], batch: int, **change: Any
) -> float:
    """Seconds of `loglikelihoods`; with `chunk`, that many examples tokenised together (the
    runner's CHUNK), and with `old`, one request at a time."""
    from evaluation.runners import prompted

    chunk = prompted.CHUNK
    prompted.CHUNK = change.get("chunk", chunk)
    if change.get("old"):
        model.tokens.pairs = partial(one_at_a_time, model)
    try:
        model.batch_size = batch
        started = time.perf_counter()
        model.loglikelihoods(contexts, choices)
        return time.perf_counter() - started
    finally:
        prompted.CHUNK = chunk
        vars(model.tokens).pop("pairs", None)


def one_at_a_time(model: Any, contexts: list[str], choices: list[list[str]]) -> list[Any]:
    """The tokens as the runner made them before issue 46: per request, context + choice and
    the context again, each with its own call (the contexts here are never empty)."""
    out = []
    for context, options in zip(contexts, choices, strict=True):
        pairs = []
        for option in options:
            head = context.rstrip()
            whole, ids = model.encode(context + option), model.encode(head)
            pairs.append((ids, whole[len(ids) :]))
        out.append(pairs)
    return out


def own_forward(model: Any, contexts: list[str], choices: list[list[str]], batch: int) -> float:
    """Seconds of the runner's kernels alone over its own length-sorted batches, whose inputs
    are already padded and on the device; no tokenising, no reading back."""
    import torch

    from evaluation.runners.feed import inference, on_device

    units = sorted(model.units(contexts, choices), key=lambda unit: -len(unit.context))
    inputs = [
        on_device(model._causal_inputs(units[s : s + batch])[1], model.input_device)
        for s in range(0, len(units), batch)
    ]
    synchronize = torch.cuda.synchronize if model.device == "cuda" else (lambda: None)
    synchronize()
    started = time.perf_counter()
    with inference(model.device):
        for tensors in inputs:
            model._causal_scores(tensors)
    synchronize()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
