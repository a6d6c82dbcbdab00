"""How many contrast sets a difference in consistency needs (docs/metrics.md, "The sets a
difference needs"). Pure functions: the release page and the API answer them for a release's
number of sets, and evaluation's Compare runs for the discordance two runs show.

Two runs on n sets: a set is discordant when one run is consistent on it and the other is not.
psi is the share of discordant sets, delta the difference in consistency (p10 - p01: consistent
in a only, minus in b only; |delta| <= psi). McNemar's test on consistency sees only the
discordant sets, so its power depends on n, psi and delta alone.
"""

import math
from statistics import NormalDist
from typing import Any

ALPHA = 0.05
POWER = 0.8
ASSUMED_DISCORDANCE = (0.1, 0.2, 0.3)  # where no two runs have been compared yet
CHOSEN_DIFFERENCE = 0.05


def _z(p: float) -> float:
    return NormalDist().inv_cdf(p)


def consistency_half_width(n_sets: int, consistency: float = 0.5, level: float = 0.95) -> float:
    """Half the width of consistency's normal-approximation interval over n sets,
    z_{(1+level)/2} sqrt(c (1 - c) / n); at c = 1/2 (the default) the widest it can be."""
    return _z((1 + level) / 2) * math.sqrt(consistency * (1 - consistency) / n_sets)


def sets_needed(
    difference: float, discordance: float, alpha: float = ALPHA, power: float = POWER
) -> int | None:
    """Connor (1987), "Sample size for testing differences in proportions for the paired-sample
    design", Biometrics 43: 207-211: the sets McNemar's test needs to detect `difference`
    (delta) two-sided at `alpha` with `power`, where `discordance` (psi) of them disagree:
    n = (z_{1-alpha/2} sqrt(psi) + z_{power} sqrt(psi - delta^2))^2 / delta^2, rounded up.
    None where no n can: delta = 0, or |delta| > psi."""
    delta = abs(difference)
    if delta == 0 or delta > discordance or discordance > 1:
        return None
    z_alpha, z_power = _z(1 - alpha / 2), _z(power)
    root = z_alpha * math.sqrt(discordance) + z_power * math.sqrt(discordance - delta**2)
    return math.ceil(root**2 / delta**2 - 1e-9)  # 1e-9: a whole n computed as n + rounding


def detectable_difference(
    n_sets: int, discordance: float, alpha: float = ALPHA, power: float = POWER
) -> float | None:
    """Connor's formula solved for delta: the smallest difference in consistency that
    McNemar's test detects with `power` on n sets at discordance psi. Squaring
    sqrt(n) delta - z_a sqrt(psi) = z_b sqrt(psi - delta^2) gives a quadratic in delta whose
    larger root is delta = (z_a sqrt(n psi) + z_b sqrt(psi (n - z_a^2 + z_b^2))) / (n + z_b^2).
    None where even delta = psi (every discordant set one way) is too small, or n is tiny."""
    if n_sets <= 0 or not 0 < discordance <= 1:
        return None
    z_alpha, z_power = _z(1 - alpha / 2), _z(power)
    inside = n_sets - z_alpha**2 + z_power**2
    if inside < 0:
        return None
    delta = (
        z_alpha * math.sqrt(n_sets * discordance) + z_power * math.sqrt(discordance * inside)
    ) / (n_sets + z_power**2)
    return delta if delta <= discordance else None


def power_figures(
    n_sets: int,
    discordance: float | None = None,
    difference: float = CHOSEN_DIFFERENCE,
    consistency: float = 0.5,
) -> dict[str, object]:
    """Item by item, what a release of n sets can tell apart: consistency's half-width, and per
    discordance (the one given, else the assumed ones) the smallest detectable difference and
    the sets `difference` needs."""
    rates = (discordance,) if discordance is not None else ASSUMED_DISCORDANCE
    return {
        "sets": n_sets,
        "consistency_half_width": consistency_half_width(n_sets, consistency) if n_sets else None,
        "alpha": ALPHA,
        "power": POWER,
        "difference": difference,
        "by_discordance": [
            {
                "discordance": rate,
                "detectable_difference": detectable_difference(n_sets, rate),
                "sets_needed": sets_needed(difference, rate),
            }
            for rate in rates
        ],
    }


def release_power(counts: dict[str, Any]) -> dict[str, dict[str, object]]:
    """power_figures for each split of a release's counts that holds sets."""
    return {split: power_figures(n) for split, n in sorted(counts.get("sets", {}).items()) if n}
