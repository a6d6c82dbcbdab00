"""Agreement statistics for validation (SPEC §4): pure functions over plain data.

No Django, no torch. Each function states its definition and source.
"""

import math
import random
from collections.abc import Sequence

import numpy as np

NAN = float("nan")
Table = Sequence[Sequence[int]] | np.ndarray


def fleiss_kappa(table: Table) -> float:
    """Fleiss' kappa (Fleiss, 1971) of an N x k table of vote counts, n votes in every row.

    P_i = sum_j n_ij (n_ij - 1) / (n (n - 1)), P = mean P_i; p_j = sum_i n_ij / (N n),
    Pe = sum_j p_j^2; kappa = (P - Pe) / (1 - Pe). NaN when undefined (no items, or Pe = 1).
    """
    counts = np.asarray(table, dtype=float)
    if counts.size == 0 or counts.shape[0] == 0:
        return NAN
    n = counts[0].sum()
    if n < 2 or not np.all(counts.sum(axis=1) == n):
        raise ValueError("every item needs the same number (at least 2) of votes")
    n_items = counts.shape[0]
    p_i = (counts * (counts - 1)).sum(axis=1) / (n * (n - 1))
    p_bar = p_i.mean()
    p_j = counts.sum(axis=0) / (n_items * n)
    p_e = float((p_j**2).sum())
    if math.isclose(p_e, 1.0):
        return NAN
    return float((p_bar - p_e) / (1 - p_e))


def krippendorff_alpha_nominal(table: Table) -> float:
    """Krippendorff's alpha at the nominal level, from a units x values table of counts.

    Units may have different numbers of values; units with fewer than 2 are not pairable and
    are dropped. With the coincidence matrix o_ck = sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1)
    and n_c = sum_k o_ck, n = sum_c n_c: alpha = 1 - (n - 1) * sum_{c != k} o_ck /
    sum_{c != k} n_c n_k (Krippendorff, 2011, "Computing Krippendorff's alpha-reliability").
    """
    counts = np.asarray(table, dtype=float)
    if counts.size == 0:
        return NAN
    m = counts.sum(axis=1)
    counts = counts[m >= 2]
    m = m[m >= 2]
    if counts.shape[0] == 0:
        return NAN
    # Diagonal and total coincidences per unit, without building k x k matrices per unit.
    weights = 1.0 / (m - 1)
    n_c = counts.sum(axis=0)  # sum_k o_ck = sum_u n_uc (m_u - 1) / (m_u - 1)
    o_diag = ((counts * (counts - 1)) * weights[:, None]).sum(axis=0)
    n = n_c.sum()
    disagree_observed = n - o_diag.sum()
    disagree_expected = (n**2 - (n_c**2).sum()) / (n - 1)
    if disagree_expected == 0:
        return NAN
    return float(1 - disagree_observed / disagree_expected)


def human_f1(
    responses: Sequence[Sequence[str]],
    majorities: Sequence[str],
    labels: Sequence[str],
    seed: int = 1,
) -> dict[str, object]:
    """Estimated human F1, as in DynaSent (Potts et al., 2021), SPEC §4.

    Keep the items whose majority is a task label; shuffle each item's responses with one RNG
    seeded with `seed`; synthetic annotator a gets response a of every item. Score each annotator
    against the majority labels (a response with an extra label is simply wrong), then average
    P/R/F1 over annotators. Macro F1 is the mean of the per-label F1 over the task labels.
    """
    rng = random.Random(seed)
    kept = [(list(r), m) for r, m in zip(responses, majorities, strict=True) if m in labels and r]
    if not kept:
        return {"macro": NAN, "per_label": {}, "annotators": 0, "items": 0}
    index = {label: i for i, label in enumerate(labels)}
    n_annotators = max(len(r) for r, _ in kept)
    # answers[i, a]: annotator a's label index on item i; extra labels get len(labels), and a
    # missing response -1, so neither ever matches a task label.
    answers = np.full((len(kept), n_annotators), -1, dtype=np.int64)
    for row, (item_responses, _) in enumerate(kept):
        rng.shuffle(item_responses)
        answers[row, : len(item_responses)] = [index.get(r, len(labels)) for r in item_responses]
    gold = np.array([index[m] for _, m in kept])
    scores = np.zeros((n_annotators, len(labels), 3))  # precision, recall, f1
    for a in range(n_annotators):
        answered = answers[:, a] >= 0
        predicted, truth = answers[answered, a], gold[answered]
        for j in range(len(labels)):
            tp = np.count_nonzero((predicted == j) & (truth == j))
            n_pred, n_gold = np.count_nonzero(predicted == j), np.count_nonzero(truth == j)
            precision = tp / n_pred if n_pred else 0.0
            recall = tp / n_gold if n_gold else 0.0
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
            scores[a, j] = precision, recall, f1
    mean = scores.mean(axis=0)
    per_label = {
        label: {
            "precision": float(mean[j, 0]),
            "recall": float(mean[j, 1]),
            "f1": float(mean[j, 2]),
        }
        for j, label in enumerate(labels)
    }
    return {
        "macro": float(mean[:, 2].mean()),
        "per_label": per_label,
        "annotators": n_annotators,
        "items": len(kept),
    }


def median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle])
    return (ordered[middle - 1] + ordered[middle]) / 2
