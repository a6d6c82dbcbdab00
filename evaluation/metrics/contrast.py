"""Contrast-set metrics (docs/metrics.md): pure functions over plain data. No Django, no torch.

A contrast set S is an original and its released perturbations. A model is consistent on S iff
it is right on every member, the original included (Gardner et al., 2020). Uncertainty comes
from a percentile bootstrap that resamples whole sets, because examples within a set are
correlated.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 0


@dataclass(frozen=True)
class Scored:
    set_id: str
    role: str  # "original" or "perturbed"
    gold: str
    predicted: str
    tags: tuple[str, ...] = field(default=())

    @property
    def correct(self) -> bool:
        return self.gold == self.predicted


def _mean(values: Sequence[bool]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def per_label(examples: Sequence[Scored], labels: Sequence[str]) -> dict[str, Any]:
    """Precision, recall and F1 per label, macro F1, and the confusion matrix (rows: gold,
    columns: predicted; predictions outside `labels` land in an extra "other" column)."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels) + 1), dtype=int)
    for e in examples:
        if e.gold in index:
            matrix[index[e.gold], index.get(e.predicted, len(labels))] += 1
    scores = {}
    for i, label in enumerate(labels):
        tp = matrix[i, i]
        predicted, actual = matrix[:, i].sum(), matrix[i].sum()
        precision = tp / predicted if predicted else 0.0
        recall = tp / actual if actual else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        scores[label] = {
            "precision": float(precision),
            "recall": float(recall),
            "f1": float(f1),
            "support": int(actual),
        }
    return {
        "per_label": scores,
        "macro_f1": float(np.mean([s["f1"] for s in scores.values()])) if labels else None,
        "confusion": {
            "labels": list(labels),
            "columns": [*labels, "other"],
            "matrix": matrix.tolist(),
        },
    }


def _set_table(examples: Sequence[Scored], tags: list[str]) -> dict[str, np.ndarray]:
    """Per-set counts that every figure (and every bootstrap sample) is a ratio of sums of."""
    order: dict[str, int] = {}
    for e in examples:
        order.setdefault(e.set_id, len(order))
    n = len(order)
    t = {name: np.zeros(n) for name in ("orig_n", "orig_ok", "pert_n", "pert_ok", "ok_all")}
    t["tag_n"] = np.zeros((n, len(tags)))
    t["tag_ok"] = np.zeros((n, len(tags)))
    wrong = np.zeros(n, dtype=bool)
    tag_index = {tag: j for j, tag in enumerate(tags)}
    for e in examples:
        i = order[e.set_id]
        wrong[i] |= not e.correct
        if e.role == "original":
            t["orig_n"][i] += 1
            t["orig_ok"][i] += e.correct
        else:
            t["pert_n"][i] += 1
            t["pert_ok"][i] += e.correct
            for tag in e.tags:
                t["tag_n"][i, tag_index[tag]] += 1
                t["tag_ok"][i, tag_index[tag]] += e.correct
    t["ok_all"] = (~wrong).astype(float)
    return t


def safe_ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan
        )


def resample_weights(n_sets: int, samples: int, seed: int) -> np.ndarray:
    """weights[b, s]: how often set s is drawn in bootstrap sample b (sets drawn with
    replacement), so that every resampled figure is a matrix product."""
    rng = np.random.default_rng(seed)
    weights = np.zeros((samples, n_sets))
    draws = rng.integers(0, n_sets, size=(samples, n_sets))
    np.add.at(weights, (np.arange(samples)[:, None], draws), 1)
    return weights


def percentile_interval(values: np.ndarray, level: float) -> list[float] | None:
    """The central `level` percentile interval of the finite values, or None."""
    values = values[~np.isnan(values)]
    if not len(values):
        return None
    low, high = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    return [float(np.percentile(values, low)), float(np.percentile(values, high))]


def bootstrap_intervals(
    examples: Sequence[Scored],
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    level: float = 0.95,
) -> dict[str, Any]:
    """95% percentile intervals, resampling contrast sets (not examples) with replacement."""
    tags = sorted({tag for e in examples for tag in e.tags})
    t = _set_table(examples, tags)
    n_sets = len(t["ok_all"])
    if n_sets == 0:
        return {}
    counts = resample_weights(n_sets, samples, seed)
    original = safe_ratio(counts @ t["orig_ok"], counts @ t["orig_n"])
    perturbed = safe_ratio(counts @ t["pert_ok"], counts @ t["pert_n"])
    figures = {
        "original_accuracy": original,
        "perturbed_accuracy": perturbed,
        "drop": original - perturbed,
        "consistency": (counts @ t["ok_all"]) / n_sets,
    }
    per_tag = safe_ratio(counts @ t["tag_ok"], counts @ t["tag_n"])
    out: dict[str, Any] = {
        name: percentile_interval(values, level) for name, values in figures.items()
    }
    out["per_tag"] = {tag: percentile_interval(per_tag[:, j], level) for j, tag in enumerate(tags)}
    out["samples"], out["seed"], out["level"] = samples, seed, level
    return out


def exact_match_by_group(examples: Sequence[Scored], groups: Sequence[str]) -> dict[str, Any]:
    """MC-TACO's exact match (Zhou et al., 2019, its evaluator's "Strict Acc."): per role, the
    share of groups (a question and its candidate answers) whose every row is right, with the
    number of groups."""
    right: dict[tuple[str, str], bool] = {}
    for e, group in zip(examples, groups, strict=True):
        right[e.role, group] = right.get((e.role, group), True) and e.correct
    out = {}
    for role in ("original", "perturbed"):
        values = [ok for (r, _), ok in right.items() if r == role]
        out[role] = {"exact_match": _mean(values), "groups": len(values)}
    return out


def contrast_metrics(
    examples: Sequence[Scored],
    labels: Sequence[str],
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """Every figure of docs/metrics.md for classification, with counts beside each."""
    originals = [e.correct for e in examples if e.role == "original"]
    perturbed = [e.correct for e in examples if e.role == "perturbed"]
    by_set: dict[str, bool] = defaultdict(lambda: True)
    for e in examples:
        by_set[e.set_id] &= e.correct
    tag_results: dict[str, list[bool]] = defaultdict(list)
    for e in examples:
        if e.role == "perturbed":
            for tag in e.tags:
                tag_results[tag].append(e.correct)
    original_accuracy, perturbed_accuracy = _mean(originals), _mean(perturbed)
    drop = (
        original_accuracy - perturbed_accuracy
        if original_accuracy is not None and perturbed_accuracy is not None
        else None
    )
    return {
        "original_accuracy": original_accuracy,
        "perturbed_accuracy": perturbed_accuracy,
        "drop": drop,
        "consistency": _mean(list(by_set.values())),
        "counts": {"originals": len(originals), "perturbed": len(perturbed), "sets": len(by_set)},
        "per_tag": {
            tag: {"accuracy": _mean(results), "count": len(results)}
            for tag, results in sorted(tag_results.items())
        },
        **per_label(examples, labels),
        "intervals": bootstrap_intervals(examples, samples=samples, seed=seed),
    }
