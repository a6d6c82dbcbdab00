"""Minimal-pair LM scoring throughput: pairs/s of ContrastLab's scorer against a naive loop
that scores one pair at a time, on the same model, texts and threads, in one run.

The pairs are the IMDb contrast sets (Gardner et al., 2020), each review cut to its first
`--words` words: the original against its contrast. There is no hub here, so the model is a
randomly initialised GPT-2 of DistilGPT-2's shape (6 layers, 768 wide) with a byte-level BPE
tokenizer trained on the texts themselves; throughput does not depend on the weights.

    .venv/bin/python benchmarks/lm_scoring.py [--pairs N] [--words 24] [--batch 32]
"""

import argparse
import sys
import time

from common import OUT, ROOT, read_tsv, require_data

sys.path.insert(0, str(ROOT))


def build_model(texts: list[str]) -> str:
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    directory = OUT / "gpt2-distil-shape-random"
    if (directory / "config.json").exists():
        return str(directory)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts, vocab_size=8000, special_tokens=["<|endoftext|>"])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
    )  # fmt: skip
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tokenizer), n_layer=6, n_embd=768, n_head=12,
                        bos_token_id=0, eos_token_id=0)  # fmt: skip
    GPT2LMHeadModel(config).eval().save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=488)
    parser.add_argument("--words", type=int, default=24)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from evaluation.runners.lm import LanguageModelScorer

    def cut(text: str) -> str:
        return " ".join(text.replace("<br />", " ").split()[: args.words])

    originals = read_tsv(require_data("imdb-contrast", "test_original.tsv"))
    contrasts = read_tsv(require_data("imdb-contrast", "test_contrast.tsv"))
    pairs = [(cut(o["Text"]), cut(c["Text"])) for o, c in zip(originals, contrasts, strict=True)]
    pairs = (pairs * (args.pairs // len(pairs) + 1))[: args.pairs]
    source = build_model([t for pair in pairs for t in pair])
    print(f"{len(pairs)} pairs of {args.words}-word texts; GPT-2 (6x768, random); "
          f"{torch.get_num_threads()} threads; batch {args.batch}")  # fmt: skip

    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForCausalLM.from_pretrained(source).eval()

    def naive_score(text: str) -> float:
        ids = [tokenizer.bos_token_id, *tokenizer(text, add_special_tokens=False)["input_ids"]]
        with torch.inference_mode():
            logits = model(torch.tensor([ids])).logits[0]
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        return float(sum(logprobs[i - 1, t] for i, t in enumerate(ids) if i > 0))

    started = time.perf_counter()
    naive = [naive_score(good) > naive_score(bad) for good, bad in pairs]
    naive_s = time.perf_counter() - started

    scorer = LanguageModelScorer(source, seq2seq=False, device="cpu")
    texts = [t for pair in pairs for t in pair]
    started = time.perf_counter()
    scores = scorer.score(texts, [None] * len(texts), batch_size=args.batch)
    ours_s = time.perf_counter() - started
    ours = [scores[2 * i] > scores[2 * i + 1] for i in range(len(pairs))]

    agree = sum(a == b for a, b in zip(naive, ours, strict=True)) / len(pairs)
    print(f"naive loop, one pair at a time: {len(pairs) / naive_s:8.1f} pairs/s ({naive_s:.1f} s)")
    print(f"ContrastLab scorer:             {len(pairs) / ours_s:8.1f} pairs/s ({ours_s:.1f} s)")
    print(f"ratio: {naive_s / ours_s:.2f}x; same right/wrong on {agree:.1%} of the pairs")


if __name__ == "__main__":
    main()
