"""The sets a difference in consistency needs (annotation/releases/power.py): Connor's (1987)
sample size checked by simulating McNemar's test at that size, its inverse against itself, and
the half-width against statsmodels' normal interval."""

import numpy as np
import pytest
from scipy.stats import binom, chi2
from statsmodels.stats.proportion import proportion_confint

from annotation.releases.power import (
    consistency_half_width,
    detectable_difference,
    power_figures,
    sets_needed,
)

SIMULATIONS = 20000


def simulated_power(n: int, difference: float, discordance: float, seed: int) -> dict[str, float]:
    """n sets drawn many times, each set consistent in run a only (p10), in b only (p01) or
    neither way; the share of draws where McNemar's test rejects at 0.05: its asymptotic form
    (the statistic (n10 - n01)^2 / (n10 + n01), chi-squared with one degree of freedom, the
    test Connor's normal approximation is of) and the exact binomial one (scipy)."""
    p10, p01 = (discordance + difference) / 2, (discordance - difference) / 2
    counts = np.random.default_rng(seed).multinomial(
        n, [p10, p01, 1 - discordance], size=SIMULATIONS
    )
    n10, n01 = counts[:, 0], counts[:, 1]
    discordant = np.maximum(n10 + n01, 1)
    asymptotic = chi2.sf((n10 - n01) ** 2 / discordant, 1) < 0.05
    exact = np.minimum(1, 2 * binom.cdf(np.minimum(n10, n01), n10 + n01, 0.5)) < 0.05
    return {"asymptotic": float(asymptotic.mean()), "exact": float(exact.mean())}


@pytest.mark.parametrize(
    ("difference", "discordance"), [(0.05, 0.15), (0.08, 0.2), (0.1, 0.3), (0.2, 0.4)]
)
def test_the_sets_needed_give_mcnemars_test_a_power_of_080(difference, discordance):
    n = sets_needed(difference, discordance)
    assert n is not None
    power = simulated_power(n, difference, discordance, seed=n)
    # 20,000 draws: the simulated power's standard error is 0.003. Connor's normal
    # approximation errs on the safe side: 0.81 at a few hundred sets, 0.825 at 77.
    assert 0.79 <= power["asymptotic"] <= 0.835
    # The exact test, conditional on the discordant sets, is conservative: 0.76 to 0.78.
    assert 0.74 < power["exact"] <= power["asymptotic"]
    # One set in five fewer loses power that the simulation sees.
    assert simulated_power(int(n * 0.8), difference, discordance, seed=1)["asymptotic"] < 0.77


@pytest.mark.parametrize("n", [20, 68, 239, 488, 5000])
@pytest.mark.parametrize("discordance", [0.05, 0.2, 0.5])
def test_the_detectable_difference_is_the_one_its_sets_suffice_for(n, discordance):
    delta = detectable_difference(n, discordance)
    if delta is None:  # too few sets: even every discordant set one way is not enough
        assert sets_needed(discordance, discordance) > n  # type: ignore[operator]
        return
    assert sets_needed(delta, discordance) == n
    assert sets_needed(delta * 0.98, discordance) > n
    assert 0 < delta <= discordance


def test_connors_formula_is_symmetric_and_refuses_the_impossible():
    assert sets_needed(-0.05, 0.2) == sets_needed(0.05, 0.2)
    assert sets_needed(0, 0.2) is None
    assert sets_needed(0.3, 0.2) is None  # more difference than discordant sets
    assert detectable_difference(0, 0.2) is None
    assert detectable_difference(100, 0) is None


@pytest.mark.parametrize("n", [68, 239, 488])
def test_the_half_width_is_the_normal_intervals(n):
    low, high = proportion_confint(n // 2, n, alpha=0.05, method="normal")
    if n % 2 == 0:
        assert consistency_half_width(n) == pytest.approx((high - low) / 2)
    assert consistency_half_width(n, 0.7) < consistency_half_width(n)


def test_power_figures_give_each_assumed_discordance_or_the_observed_one():
    figures = power_figures(488)
    assert [row["discordance"] for row in figures["by_discordance"]] == [0.1, 0.2, 0.3]  # type: ignore[index]
    observed = power_figures(488, discordance=0.25, difference=0.04)
    (row,) = observed["by_discordance"]  # type: ignore[misc]
    assert row == {
        "discordance": 0.25,
        "detectable_difference": detectable_difference(488, 0.25),
        "sets_needed": sets_needed(0.04, 0.25),
    }
