"""Minimal-pair metrics (docs/metrics.md, docs/task-types.md): pure functions over plain scores.

A pair is an acceptable (correct) variant and an unacceptable (contrastive) one of the same
contrast set. The model is right on a pair iff score(correct) > score(contrastive), strictly: a
tie is wrong, and ties are counted. A set is consistent iff the model is right on all its
pairs. Distributional discrepancy (Vamvas & Sennrich, 2021) is the mean over pairs of
max(0, score(ŷ) - max(score(correct), score(contrastive))), ŷ being the model's own output
for the pair's source; it is None when no pair has one.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaluation.metrics.contrast import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED, Scored
from evaluation.metrics.contrast import bootstrap_intervals as set_bootstrap

HISTOGRAM_BINS = 20


@dataclass(frozen=True)
class ScoredPair:
    set_id: str
    correct: float  # score of the acceptable variant
    contrastive: float  # score of the unacceptable variant
    tags: tuple[str, ...] = field(default=())
    own: float | None = None  # score of the model's own output for the source, if any

    @property
    def right(self) -> bool:
        return self.correct > self.contrastive


def pair_metrics(
    pairs: Sequence[ScoredPair],
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """pair_accuracy, ties, consistency, per_tag, discrepancy and bootstrap intervals over
    sets, with counts beside each, and a histogram of score(correct) - score(contrastive)."""
    by_set: dict[str, bool] = defaultdict(lambda: True)
    per_tag: dict[str, list[bool]] = defaultdict(list)
    for pair in pairs:
        by_set[pair.set_id] &= pair.right
        for tag in pair.tags:
            per_tag[tag].append(pair.right)
    # As perturbed examples, pairs bootstrap exactly like contrast sets do (resampling sets).
    as_examples = [
        Scored(p.set_id, "perturbed", "right", "right" if p.right else "wrong", p.tags)
        for p in pairs
    ]
    intervals = set_bootstrap(as_examples, samples=samples, seed=seed)
    return {
        "pair_accuracy": _mean([p.right for p in pairs]),
        "ties": sum(1 for p in pairs if p.correct == p.contrastive),
        "consistency": _mean(list(by_set.values())),
        "per_tag": {
            tag: {"accuracy": _mean(results), "count": len(results)}
            for tag, results in sorted(per_tag.items())
        },
        "discrepancy": discrepancy(pairs),
        "counts": {"pairs": len(pairs), "sets": len(by_set)},
        "differences": histogram([p.correct - p.contrastive for p in pairs]),
        "intervals": {
            "pair_accuracy": intervals.get("perturbed_accuracy"),
            "consistency": intervals.get("consistency"),
            "per_tag": intervals.get("per_tag", {}),
            "samples": samples,
            "seed": seed,
        },
    }


def discrepancy(pairs: Sequence[ScoredPair]) -> float | None:
    gaps = [max(0.0, p.own - max(p.correct, p.contrastive)) for p in pairs if p.own is not None]
    return float(np.mean(gaps)) if gaps else None


def histogram(values: Sequence[float], bins: int = HISTOGRAM_BINS) -> dict[str, list[float]]:
    if not values:
        return {"edges": [], "counts": []}
    counts, edges = np.histogram(np.asarray(values, dtype=float), bins=bins)
    return {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts]}


def _mean(values: Sequence[bool]) -> float | None:
    return float(np.mean(values)) if len(values) else None
