"""Paired statistics for two runs on the same examples (docs/metrics.md, "Comparing two runs").
Pure functions over plain arrays: no Django, no torch.

Every figure of a run is a function of per-set sums (a row per contrast set, a column per
count: originals right, perturbations, ...), so a resampled or permuted figure is that function
of a weighted sum of rows. Two runs on one release have the same sets and the same members, which
is what pairs them: the bootstrap draws the same sets for both runs, and the permutation test
swaps the two runs' rows set by set.
"""

from collections.abc import Callable, Iterator, Sequence
from math import comb

import numpy as np

from evaluation.metrics.contrast import percentile_interval

PAIRED_SAMPLES = 2000  # bootstrap draws of sets
PERMUTATIONS = 5000  # sign flips over sets
PAIRED_SEED = 0
CHUNK = 500  # draws made at once: memory stays (CHUNK x sets) whatever the release's size

Figure = Callable[[np.ndarray], np.ndarray]  # summed rows (..., columns) -> values (...)


def mcnemar_exact(
    a: Sequence[bool] | np.ndarray, b: Sequence[bool] | np.ndarray
) -> tuple[float, int, int]:
    """McNemar's exact test (McNemar, 1947; the conditional binomial form, as statsmodels'
    `mcnemar(table, exact=True)`): of the n = n01 + n10 discordant units (right in one run
    only), n01 are right in b alone; under H0 each is Binomial(n, 1/2), and the two-sided
    p-value is min(1, 2 P(X <= min(n01, n10))). With no discordant unit, p = 1. Returns p,
    n10 (right in a alone) and n01 (right in b alone)."""
    x, y = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    only_a, only_b = int(np.sum(x & ~y)), int(np.sum(~x & y))
    return binomial_two_sided(min(only_a, only_b), only_a + only_b), only_a, only_b


def binomial_two_sided(k: int, n: int) -> float:
    """2 P(X <= k) for X ~ Binomial(n, 1/2), k <= n/2, capped at 1: computed in integers, so
    exact up to the final division."""
    k, n = int(k), int(n)  # numpy integers would overflow 2**n
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(k + 1))
    return min(1.0, 2 * tail / 2**n)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment (Holm, 1979), as statsmodels' multipletests(method="holm"):
    with the m p-values sorted p(1) <= ... <= p(m), the adjusted p(i) is
    max over j <= i of min(1, (m - j + 1) p(j)). None (no test) stays None and is not counted."""
    present = [(p, i) for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(present)):
        running = max(running, min(1.0, (len(present) - rank) * p))
        out[i] = running
    return out


def set_draws(n_sets: int, samples: int, seed: int) -> Iterator[np.ndarray]:
    """Bootstrap weights in chunks: w[b, s] is how often set s is drawn in sample b (sets drawn
    with replacement, n_sets of them)."""
    rng = np.random.default_rng(seed)
    for start in range(0, samples, CHUNK):
        size = min(CHUNK, samples - start)
        draws = rng.integers(0, n_sets, size=(size, n_sets))
        cells = (draws + n_sets * np.arange(size)[:, None]).ravel()  # bincount: 10x np.add.at
        yield np.bincount(cells, minlength=size * n_sets).reshape(size, n_sets).astype(float)


def bootstrap_sums(
    a: np.ndarray, b: np.ndarray, *, samples: int = PAIRED_SAMPLES, seed: int = PAIRED_SEED
) -> tuple[np.ndarray, np.ndarray]:
    """Both runs' rows summed over the same draws of sets (a and b: a row per set, the same
    sets in the same order): every figure's bootstrap values are figure() of these."""
    drawn = list(set_draws(len(a), samples, seed))
    return np.concatenate([w @ a for w in drawn]), np.concatenate([w @ b for w in drawn])


def paired_interval(
    drawn: tuple[np.ndarray, np.ndarray], figure: Figure, level: float = 0.95
) -> list[float] | None:
    """The percentile interval of figure(b) - figure(a) over the bootstrap's draws; draws where
    the figure is undefined (a tag no drawn set holds) are left out."""
    return percentile_interval(figure(drawn[1]) - figure(drawn[0]), level)


def paired_bootstrap(
    a: np.ndarray,
    b: np.ndarray,
    figure: Figure,
    *,
    samples: int = PAIRED_SAMPLES,
    seed: int = PAIRED_SEED,
    level: float = 0.95,
) -> list[float] | None:
    """The paired bootstrap (Efron & Tibshirani, 1993, ch. 13; resampling contrast sets as
    Gardner et al.'s clusters): sets are drawn with replacement, the same draw for both runs,
    and the interval is the central `level` percentile interval of figure(b) - figure(a)."""
    return paired_interval(bootstrap_sums(a, b, samples=samples, seed=seed), figure, level)


def swapped_sums(
    a: np.ndarray, b: np.ndarray, *, permutations: int = PERMUTATIONS, seed: int = PAIRED_SEED
) -> tuple[np.ndarray, np.ndarray]:
    """Both runs' summed rows after each random swap: each set's two rows are exchanged with
    probability 1/2, so a' = sum a + F (b - a) and b' = sum b - F (b - a)."""
    rng = np.random.default_rng(seed)
    delta = b - a
    moved = np.concatenate(
        [
            rng.integers(0, 2, size=(min(CHUNK, permutations - start), len(a))) @ delta
            for start in range(0, permutations, CHUNK)
        ]
    )
    return a.sum(axis=0) + moved, b.sum(axis=0) - moved


def permutation_p(
    a: np.ndarray, b: np.ndarray, swapped: tuple[np.ndarray, np.ndarray], figure: Figure
) -> float | None:
    """Two-sided p of figure(b) - figure(a) against its values after the swaps."""
    observed = float(figure(b.sum(axis=0)) - figure(a.sum(axis=0)))
    if np.isnan(observed):
        return None
    values = figure(swapped[1]) - figure(swapped[0])
    # a tolerance for sums of floats that are equal in exact arithmetic
    extreme = int(np.sum(np.abs(values) >= abs(observed) - 1e-12))
    return (1 + extreme) / (1 + len(values))


def sign_flip_test(
    a: np.ndarray,
    b: np.ndarray,
    figure: Figure,
    *,
    permutations: int = PERMUTATIONS,
    seed: int = PAIRED_SEED,
) -> float | None:
    """A paired permutation test over sets (Fisher, 1935; the randomisation test that
    swaps the two conditions within each pair): under H0 the two runs' rows of a set are
    exchangeable, so each set's rows are swapped with probability 1/2. With d the observed
    figure(b) - figure(a) and d* its value after a random swap, p = (1 + #{|d*| >= |d|}) /
    (1 + permutations) (Phipson & Smyth, 2010: never 0). For a figure that is a mean over sets
    this is the sign-flip test on the per-set differences."""
    swapped = swapped_sums(a, b, permutations=permutations, seed=seed)
    return permutation_p(a, b, swapped, figure)


def role_permutation_test(
    originals: np.ndarray,
    originals_right: np.ndarray,
    members: np.ndarray,
    right: np.ndarray,
    *,
    permutations: int = PERMUTATIONS,
    seed: int = PAIRED_SEED,
) -> float | None:
    """Within one run, is the drop (accuracy on originals - accuracy on perturbations) more
    than chance? Per set: its originals, those right, its members and those right. Under H0 a
    set's originals are no easier than its perturbations, so which of its members are the
    originals is exchangeable: each permutation relabels, in every set, `originals` members
    drawn at random as originals (how many of them are right is hypergeometric). Two-sided p as
    in `sign_flip_test`."""
    perturbed, perturbed_right = members - originals, right - originals_right
    if originals.sum() == 0 or perturbed.sum() == 0:
        return None
    observed = originals_right.sum() / originals.sum() - perturbed_right.sum() / perturbed.sum()
    mixed = (originals > 0) & (perturbed > 0)  # elsewhere relabelling changes nothing
    # One original (most sets): it is right with probability right / members, a Bernoulli
    # draw, far cheaper than numpy's hypergeometric.
    single, several = mixed & (originals == 1), mixed & (originals > 1)
    chance = right[single] / members[single]
    fixed = originals_right[~mixed].sum()
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, permutations, CHUNK):
        size = (min(CHUNK, permutations - start), int(several.sum()))
        good = np.broadcast_to(right[several], size).astype(np.int64)
        bad = np.broadcast_to(members[several] - right[several], size).astype(np.int64)
        drawn = np.broadcast_to(originals[several], size).astype(np.int64)
        as_originals = rng.hypergeometric(good, bad, drawn).sum(axis=1) + fixed
        as_originals += (rng.random((size[0], len(chance))) < chance).sum(axis=1)
        drop = as_originals / originals.sum() - (right.sum() - as_originals) / perturbed.sum()
        extreme += int(np.sum(np.abs(drop) >= abs(observed) - 1e-12))
    return (1 + extreme) / (1 + permutations)
