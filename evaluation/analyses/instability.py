"""Seed instability (Zhou et al., 2020; docs/metrics.md, docs/analyses.md): how much of the
variance of an accuracy across K runs comes from examples varying together rather than
independently.

With C[k, i] in {0, 1} the correctness of run k on unit i (an example, or a whole contrast set
for consistency) and Acc_k = mean_i C[k, i]:

    Var(Acc) = (1/N^2) sum_i Var(C_i)  +  (2/N^2) sum_{i<j} Cov(C_i, C_j)
               independent part       covariance part

every variance and covariance over the K runs with ddof=1, so the parts add up exactly. The
covariance part is computed in O(NK) as Var(Acc) - the independent part.
"""

import math
from typing import Any

import numpy as np


def decompose(correct: np.ndarray) -> dict[str, Any]:
    """`correct`: a KxN array (runs x units) of 0/1. Needs K >= 2 and N >= 1."""
    correct = np.asarray(correct, dtype=float)
    k, n = correct.shape
    if k < 2 or n < 1:
        raise ValueError("instability needs at least two runs and one unit")
    accuracies = correct.mean(axis=1)
    variance = float(accuracies.var(ddof=1))
    independent = float(correct.var(axis=0, ddof=1).sum() / n**2)
    covariance = variance - independent
    std = math.sqrt(variance)
    return {
        "mean": float(accuracies.mean()),
        "variance": variance,
        "independent": independent,
        "covariance": covariance,
        "covariance_share": covariance / variance if variance > 0 else None,
        "std": std,
        "normalised_std": std * math.sqrt(n),
        "n": n,
        "k": k,
        "accuracies": [float(a) for a in accuracies],
    }
