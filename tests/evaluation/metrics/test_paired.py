"""The paired statistics of evaluation/metrics/paired.py against statsmodels and scipy (the exact
tests, Holm), and against independent computations written here (bootstrap and permutation
tests, to within their Monte Carlo error)."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from evaluation.metrics.paired import (
    holm,
    mcnemar_exact,
    paired_bootstrap,
    role_permutation_test,
    sign_flip_test,
)

# Ours is computed in integers and rounded once; scipy's and statsmodels' come from the
# incomplete beta function, which can differ in the last bit or two.
LAST_BITS = 1e-12


def outcomes(only_a: int, only_b: int, both: int = 3, neither: int = 2) -> tuple[list, list]:
    a = [True] * only_a + [False] * only_b + [True] * both + [False] * neither
    b = [False] * only_a + [True] * only_b + [True] * both + [False] * neither
    return a, b


@pytest.mark.parametrize("only_a", [0, 1, 2, 5, 17, 40, 300])
@pytest.mark.parametrize("only_b", [0, 1, 3, 17, 41, 260])
def test_mcnemar_exact_equals_statsmodels_and_scipys_binomial_test(only_a, only_b):
    a, b = outcomes(only_a, only_b)
    p, n10, n01 = mcnemar_exact(a, b)
    assert (n10, n01) == (only_a, only_b)
    table = [[3, only_a], [only_b, 2]]  # rows: run a right, wrong; columns: run b
    assert p == pytest.approx(mcnemar(table, exact=True).pvalue, rel=LAST_BITS, abs=1e-300)
    if only_a + only_b:
        expected = binomtest(only_b, only_a + only_b, 0.5).pvalue
        assert p == pytest.approx(expected, rel=LAST_BITS, abs=1e-300)
    else:
        assert p == 1.0


def test_mcnemar_exact_is_right_where_floats_of_2_to_the_n_overflow():
    a, b = outcomes(600, 700)
    p = mcnemar_exact(np.array(a), np.array(b))[0]
    assert p == pytest.approx(mcnemar([[3, 600], [700, 2]], exact=True).pvalue, rel=1e-9)
    assert 0 < p < 0.01


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), max_size=30))
def test_holm_equals_statsmodels_multipletests(p_values):
    ours = holm(p_values)
    present = [p for p in p_values if p is not None]
    assert [p is None for p in ours] == [p is None for p in p_values]
    if present:
        expected = multipletests(present, method="holm")[1]
        assert [p for p in ours if p is not None] == pytest.approx(list(expected), abs=1e-15)


def _sets(n: int, seed: int, flip: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-set rows (right, members) of two runs: b is a with a share `flip` of members
    flipped, so the runs are strongly paired."""
    rng = np.random.default_rng(seed)
    size = rng.integers(1, 4, n)
    right_a = rng.random((n, 3)) < 0.7
    right_b = right_a ^ (rng.random((n, 3)) < flip)
    live = np.arange(3) < size[:, None]
    a = np.stack([(right_a & live).sum(1), size], axis=1).astype(float)
    b = np.stack([(right_b & live).sum(1), size], axis=1).astype(float)
    return a, b


def accuracy(s: np.ndarray) -> np.ndarray:
    return s[..., 0] / s[..., 1]


def independent_bootstrap(a, b, samples, seed):  # type: ignore[no-untyped-def]
    """Sets drawn one by one with Python's random, the same sets for both runs."""
    draw = random.Random(seed)
    values = []
    for _ in range(samples):
        picked = [draw.randrange(len(a)) for _ in range(len(a))]
        values.append(accuracy(b[picked].sum(0)) - accuracy(a[picked].sum(0)))
    return np.percentile(values, [2.5, 97.5])


def test_the_paired_bootstrap_agrees_with_an_independent_one_within_monte_carlo_error():
    a, b = _sets(400, seed=3, flip=0.1)
    ours = paired_bootstrap(a, b, accuracy, samples=4000, seed=1)
    theirs = independent_bootstrap(a, b, samples=4000, seed=99)
    assert ours is not None
    # The ends of a 95% interval from 4000 draws move by about 0.002 here: 0.008 is 4 sigma.
    assert ours == pytest.approx(list(theirs), abs=0.008)
    # Paired, the interval is far narrower than the runs' unpaired intervals combined.
    unpaired = paired_bootstrap(a, np.roll(b, 1, axis=0), accuracy, samples=4000, seed=1)
    assert unpaired is not None and ours[1] - ours[0] < 0.6 * (unpaired[1] - unpaired[0])


def test_the_sign_flip_test_of_a_share_of_sets_is_mcnemars_within_monte_carlo_error():
    """On a figure that is the share of right sets, swapping a set's rows flips the sign of
    its difference: the permutation distribution is McNemar's binomial on the discordant sets."""
    rng = np.random.default_rng(5)
    a = rng.random(300) < 0.6
    b = a ^ (rng.random(300) < 0.12)
    b[:9] = True  # some excess of b
    rows_a = np.stack([a, np.ones(300)], axis=1).astype(float)
    rows_b = np.stack([b, np.ones(300)], axis=1).astype(float)
    flipped = sign_flip_test(rows_a, rows_b, accuracy, permutations=20000, seed=2)
    exact = mcnemar([[0, int(np.sum(a & ~b))], [int(np.sum(~a & b)), 0]], exact=True).pvalue
    assert flipped == pytest.approx(exact, abs=4 * np.sqrt(exact * (1 - exact) / 20000) + 1e-3)


def test_the_role_permutation_of_sets_of_two_is_mcnemars_within_monte_carlo_error():
    """A set of one original and one perturbation: relabelling its roles at random is
    McNemar's null on the (original, perturbation) pairs."""
    rng = np.random.default_rng(8)
    original = rng.random(250) < 0.85
    perturbed = original & (rng.random(250) < 0.8) | (~original & (rng.random(250) < 0.3))
    ones = np.ones(250)
    p = role_permutation_test(
        ones, original.astype(float), 2 * ones, (original + perturbed).astype(float),
        permutations=20000, seed=4,
    )  # fmt: skip
    table = [[0, int(np.sum(original & ~perturbed))], [int(np.sum(~original & perturbed)), 0]]
    exact = mcnemar(table, exact=True).pvalue
    assert p == pytest.approx(exact, abs=4 * np.sqrt(exact * (1 - exact) / 20000) + 1e-3)


def independent_swaps(a, b, figure, permutations, seed):  # type: ignore[no-untyped-def]
    """The permutation test written as its definition: swap each set's rows by a coin."""
    coin = random.Random(seed)
    observed = figure(b.sum(0)) - figure(a.sum(0))
    extreme = 0
    for _ in range(permutations):
        swap = np.array([coin.random() < 0.5 for _ in range(len(a))])
        a2 = np.where(swap[:, None], b, a).sum(0)
        b2 = np.where(swap[:, None], a, b).sum(0)
        extreme += abs(figure(b2) - figure(a2)) >= abs(observed) - 1e-12
    return (1 + extreme) / (1 + permutations)


def test_the_permutation_test_of_a_ratio_agrees_with_its_definition():
    a, b = _sets(120, seed=11, flip=0.15)
    b[:6, 0] = b[:6, 1]  # b right on every member of six sets
    ours = sign_flip_test(a, b, accuracy, permutations=6000, seed=0)
    theirs = independent_swaps(a, b, accuracy, permutations=6000, seed=1)
    assert ours is not None
    assert ours == pytest.approx(theirs, abs=4 * np.sqrt(theirs * (1 - theirs) / 3000) + 2e-3)
