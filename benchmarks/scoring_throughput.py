"""Classification scoring throughput on the 976 IMDb contrast-set texts (max_length 256).

Three ways, in one run, on the same model and threads:
  1. transformers.pipeline("text-classification", batch_size=32): what a user would write;
  2. a bare forward loop over token-length-sorted batches of 32: the practical fp32 limit;
  3. ContrastLab's runner (evaluation.runners.SequenceClassifier).
Prints texts/s, the ratios, and whether the predictions are identical.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/scoring_throughput.py [--model DIR]
"""

import argparse
import sys
import time
from pathlib import Path

from common import OUT, ROOT, minilm_dir, read_tsv, require_data

sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser()
    default = OUT / "minilm-cad"
    parser.add_argument("--model", type=Path, default=default if default.exists() else None)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    from evaluation.runners.classifier import SequenceClassifier

    texts = [
        row["Text"]
        for name in ("test_original.tsv", "test_contrast.tsv")
        for row in read_tsv(require_data("imdb-contrast", name))
    ]
    source = str(args.model or minilm_dir())
    torch.manual_seed(0)
    if args.model is None:  # the bare encoder: give it a seeded two-label head once
        model = AutoModelForSequenceClassification.from_pretrained(source, num_labels=2)
        source = str(OUT / "minilm-random-head")
        model.save_pretrained(source)
        AutoTokenizer.from_pretrained(minilm_dir()).save_pretrained(source)
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForSequenceClassification.from_pretrained(source).eval()
    names = model.config.id2label

    def with_pipeline() -> list[str]:
        classify = pipeline("text-classification", model=model, tokenizer=tokenizer, device=-1)
        out = classify(texts, batch_size=32, truncation=True, max_length=256)
        return [r["label"] for r in out]

    def bare_loop() -> list[str]:
        lengths = [
            len(ids) for ids in tokenizer(texts, truncation=True, max_length=256)["input_ids"]
        ]
        order = sorted(range(len(texts)), key=lengths.__getitem__)
        labels = [""] * len(texts)
        with torch.inference_mode():
            for start in range(0, len(order), 32):
                batch = order[start : start + 32]
                encoded = tokenizer(
                    [texts[i] for i in batch],
                    padding=True,
                    truncation=True,
                    max_length=256,
                    return_tensors="pt",
                )
                for i, p in zip(batch, model(**encoded).logits.argmax(-1).tolist(), strict=True):
                    labels[i] = names[p]
        return labels

    runner = SequenceClassifier(source, device="cpu", max_length=256)

    def contrastlab() -> list[str]:
        return runner.predict([[t] for t in texts], batch_size=32).labels

    methods = {
        "pipeline": with_pipeline,
        "bare sorted loop": bare_loop,
        "contrastlab runner": contrastlab,
    }
    best = dict.fromkeys(methods, float("inf"))
    results = {}
    for _ in range(args.repeats):  # round-robin, so that drift in machine speed hits all alike
        for name, fn in methods.items():
            started = time.perf_counter()
            labels = fn()
            best[name] = min(best[name], time.perf_counter() - started)
            results[name] = (len(texts) / best[name], labels)
    for name in methods:
        print(f"{name:>20}: {results[name][0]:6.1f} texts/s (best of {args.repeats})")
    ours, pipe, bare = (
        results[n][0] for n in ("contrastlab runner", "pipeline", "bare sorted loop")
    )
    print(f"model: {source}; torch threads: {torch.get_num_threads()}; texts: {len(texts)}")
    print(f"runner / pipeline = {ours / pipe:.2f}x (target >= 1.25x)")
    print(f"runner / bare loop = {ours / bare:.3f}x (target within 1.05x, i.e. >= 0.952)")
    same_bare = results["contrastlab runner"][1] == results["bare sorted loop"][1]
    agree_pipe = sum(
        a == b
        for a, b in zip(results["contrastlab runner"][1], results["pipeline"][1], strict=True)
    )
    print(
        f"identical predictions to the bare loop: {same_bare}; "
        f"agreement with the pipeline: {agree_pipe}/{len(texts)}"
    )


if __name__ == "__main__":
    main()
