"""Inoculation by fine-tuning (Liu et al., 2019; docs/metrics.md, docs/analyses.md): the pool, and
the outcome.

Fine-tune on a few challenge examples, then compare. With accuracies as shares in [0, 1]:
gap = original - contrast accuracy before; closed = (contrast after - contrast before) / gap
(None when gap is 0); drop = original before - original after. delta is in percentage points:
outcome "3" (artifacts or label shift) if 100*drop > delta; else "1" (a dataset blind spot) if
closed >= 0.8; else "2" (a model weakness) if closed < 0.2; else "between". The figures come
from the best point of the largest size: highest accuracy on the original dev examples, ties
to the smaller learning rate.
"""

import random
from collections.abc import Sequence
from typing import Any

EXPLAINED = {
    "1": "Fine-tuning on a few contrast sets closed the gap: the original data lacked these "
    "phenomena (a dataset blind spot), and the model learns them readily.",
    "2": "Fine-tuning barely closed the gap without hurting the originals: the model cannot "
    "easily handle these phenomena (a model weakness).",
    "3": "Fine-tuning hurt accuracy on the originals: the contrast sets differ from the "
    "original data in artifacts or label distribution.",
    "between": "Fine-tuning closed part of the gap: between a blind spot and a weakness.",
}


def nested_pool(set_ids: Sequence[str], sizes: Sequence[int], seed: int) -> dict[int, list[str]]:
    """size -> the sets to train on: prefixes of one seeded shuffle, so subsamples are nested."""
    order = sorted(set_ids)
    random.Random(seed).shuffle(order)
    return {size: order[:size] for size in sizes}


def best_point(points: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Of the largest size: the highest dev accuracy, ties to the smaller learning rate."""
    largest = max(p["size"] for p in points)
    candidates = [p for p in points if p["size"] == largest]
    return max(candidates, key=lambda p: (p["dev_accuracy"], -p["learning_rate"]))


def outcome(before: dict[str, float], after: dict[str, float], delta: float) -> dict[str, Any]:
    gap = before["original_accuracy"] - before["contrast_accuracy"]
    closed = (after["contrast_accuracy"] - before["contrast_accuracy"]) / gap if gap else None
    drop = before["original_accuracy"] - after["original_accuracy"]
    if 100 * drop > delta:
        kind = "3"
    elif closed is None:  # no gap to close: neither a blind spot nor a weakness shows
        kind = "between"
    elif closed >= 0.8:
        kind = "1"
    elif closed < 0.2:
        kind = "2"
    else:
        kind = "between"
    return {
        "gap": gap,
        "closed": closed,
        "drop": drop,
        "outcome": kind,
        "explanation": EXPLAINED[kind],
    }
