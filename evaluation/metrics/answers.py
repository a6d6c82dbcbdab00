"""Free-text (QA) contrast-set metrics (docs/metrics.md, docs/task-types.md): EM and token F1 on
originals and on perturbations, consistency, per tag, and bootstrap intervals over whole sets.
Pure functions over plain data; the answer rules are the project's `AnswerRules`, the ones its
validators and imports use too."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from annotation.text.answers import SQUAD, AnswerRules
from evaluation.metrics.contrast import (
    BOOTSTRAP_SAMPLES,
    BOOTSTRAP_SEED,
    percentile_interval,
    resample_weights,
    safe_ratio,
)

CONSISTENT_F1 = 0.8  # a set is consistent iff every member's F1 is above this


@dataclass(frozen=True)
class ScoredAnswer:
    set_id: str
    role: str  # "original" or "perturbed"
    gold: tuple[Any, ...]  # alternatives: each a text, or the spans of a multi-span answer
    predicted: Any  # a text, or a tuple of spans
    tags: tuple[str, ...] = field(default=())
    rules: AnswerRules = SQUAD

    @cached_property
    def scores(self) -> tuple[float, float]:
        """EM and F1, computed once: DROP's aligns spans, and every figure reads both."""
        return self.rules.em_f1(self.predicted, list(self.gold))

    @property
    def em(self) -> float:
        return self.scores[0]

    @property
    def f1(self) -> float:
        return self.scores[1]


class Answered(Protocol):
    """What the metrics read of an answer: its set, role and tags, and its EM and F1."""

    @property
    def set_id(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def em(self) -> float: ...
    @property
    def f1(self) -> float: ...


@dataclass(frozen=True)
class MarkedAnswer:
    """An answer scored already: a Prediction row's EM and F1 (a multi-span answer's spans are
    joined in its stored text, so its marks are read, not computed again)."""

    set_id: str
    role: str
    em: float
    f1: float
    tags: tuple[str, ...] = field(default=())


def _table(
    examples: Sequence[Answered], tags: list[str], rules: AnswerRules
) -> dict[str, np.ndarray]:
    """Per-set sums that every figure, and every bootstrap sample, is a ratio of."""
    order: dict[str, int] = {}
    for e in examples:
        order.setdefault(e.set_id, len(order))
    n = len(order)
    names = ("orig_n", "orig_em", "orig_f1", "pert_n", "pert_em", "pert_f1")
    t = {name: np.zeros(n) for name in names}
    t["tag_n"], t["tag_f1"] = np.zeros((n, len(tags))), np.zeros((n, len(tags)))
    consistent = np.ones(n, dtype=bool)
    column = {tag: j for j, tag in enumerate(tags)}
    for e in examples:
        i, em, f1 = order[e.set_id], e.em, e.f1
        consistent[i] &= rules.right(em, f1)
        role = "orig" if e.role == "original" else "pert"
        t[f"{role}_n"][i] += 1
        t[f"{role}_em"][i] += em
        t[f"{role}_f1"][i] += f1
        if role == "pert":
            for tag in e.tags:
                t["tag_n"][i, column[tag]] += 1
                t["tag_f1"][i, column[tag]] += f1
    t["consistent"] = consistent.astype(float)
    return t


def _figures(t: dict[str, np.ndarray], weights: np.ndarray) -> dict[str, np.ndarray]:
    """Each figure for each row of `weights` (how often each set is drawn)."""
    return {
        "original_em": safe_ratio(weights @ t["orig_em"], weights @ t["orig_n"]),
        "original_f1": safe_ratio(weights @ t["orig_f1"], weights @ t["orig_n"]),
        "perturbed_em": safe_ratio(weights @ t["pert_em"], weights @ t["pert_n"]),
        "perturbed_f1": safe_ratio(weights @ t["pert_f1"], weights @ t["pert_n"]),
        "consistency": (weights @ t["consistent"]) / weights.sum(axis=-1),
    }


def qa_metrics(
    examples: Sequence[Answered],
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    level: float = 0.95,
    rules: AnswerRules = SQUAD,
) -> dict[str, Any]:
    """Every figure of docs/task-types.md for free text, with counts beside them; a member is
    right for consistency by `rules.right`."""
    tags = sorted({tag for e in examples for tag in e.tags})
    t = _table(examples, tags, rules)
    n_sets = len(t["consistent"])
    point = {
        name: (None if not n_sets or np.isnan(v[0]) else float(v[0]))
        for name, v in _figures(t, np.ones((1, n_sets))).items()
    }
    tag_em: dict[str, list[float]] = defaultdict(list)
    tag_f1: dict[str, list[float]] = defaultdict(list)
    for e in examples:
        if e.role == "perturbed":
            for tag in e.tags:
                tag_em[tag].append(e.em)
                tag_f1[tag].append(e.f1)
    return {
        **point,
        "counts": {
            "originals": int(t["orig_n"].sum()),
            "perturbed": int(t["pert_n"].sum()),
            "sets": n_sets,
        },
        "per_tag": {
            tag: {
                "em": float(np.mean(tag_em[tag])),
                "f1": float(np.mean(tag_f1[tag])),
                "count": len(tag_f1[tag]),
            }
            for tag in tags
            if tag_f1[tag]
        },
        "intervals": _intervals(t, tags, samples, seed, level) if n_sets else {},
    }


def _intervals(
    t: dict[str, np.ndarray], tags: list[str], samples: int, seed: int, level: float
) -> dict[str, Any]:
    """Percentile intervals from resampling whole contrast sets with replacement."""
    weights = resample_weights(len(t["consistent"]), samples, seed)
    out: dict[str, Any] = {
        name: percentile_interval(values, level) for name, values in _figures(t, weights).items()
    }
    per_tag = safe_ratio(weights @ t["tag_f1"], weights @ t["tag_n"])
    out["per_tag"] = {tag: percentile_interval(per_tag[:, j], level) for j, tag in enumerate(tags)}
    out["samples"], out["seed"], out["level"] = samples, seed, level
    return out
