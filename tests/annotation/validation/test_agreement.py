"""Agreement statistics, cross-checked against independent implementations."""

import math
from collections import Counter

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from annotation.validation.agreement import (
    fleiss_kappa,
    histogram_median,
    human_f1,
    krippendorff_alpha_nominal,
)


@st.composite
def count_tables(draw, fixed_n: bool = True):  # type: ignore[no-untyped-def]
    n_items = draw(st.integers(1, 40))
    k = draw(st.integers(2, 5))
    n = draw(st.integers(2, 7))
    rows = []
    for _ in range(n_items):
        total = n if fixed_n else draw(st.integers(0, 7))
        cuts = sorted(draw(st.lists(st.integers(0, total), min_size=k - 1, max_size=k - 1)))
        rows.append([b - a for a, b in zip([0, *cuts], [*cuts, total], strict=True)])
    return np.array(rows)


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=300, deadline=None)
@given(count_tables())
def test_fleiss_kappa_matches_statsmodels(table):
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = float(statsmodels_fleiss_kappa(table))
    assert same(fleiss_kappa(table), expected)


@settings(max_examples=300, deadline=None)
@given(count_tables(fixed_n=False))
def test_krippendorff_alpha_matches_the_krippendorff_package(table):
    pairable = table[table.sum(axis=1) >= 2]
    ours = krippendorff_alpha_nominal(table)
    if len(pairable) == 0 or np.count_nonzero(pairable.sum(axis=0)) < 2:
        assert math.isnan(ours)  # one value in all: alpha is undefined
        return
    expected = krippendorff.alpha(value_counts=table, level_of_measurement="nominal")
    assert same(ours, expected)


@given(count_tables())
def test_kappa_is_one_for_unanimous_items_with_varied_labels(table):
    unanimous = np.zeros_like(table)
    n = table[0].sum()
    for i in range(len(table)):
        unanimous[i, i % table.shape[1]] = n
    if len(table) >= 2:
        assert math.isclose(fleiss_kappa(unanimous), 1.0)


def test_fleiss_kappa_textbook_example():
    # Fleiss (1971) as reproduced on Wikipedia: 10 items, 14 raters, 5 categories: 0.210.
    table = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]  # fmt: skip
    assert round(fleiss_kappa(table), 3) == 0.210


def test_fleiss_kappa_refuses_items_with_different_vote_counts():
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[3, 2], [2, 2]])


def test_human_f1_worked_by_hand():
    # Every annotator agrees with the majority except one "neg" on a "pos" item: with a single
    # pos item and a single neg item, whichever annotator draws the "neg" response on item 1
    # scores pos F1 = 0 and neg P = 1/2, R = 1, F1 = 2/3; the others score 1 and 1.
    result = human_f1(
        [["pos", "pos", "neg"], ["neg", "neg", "neg"]], ["pos", "neg"], ["pos", "neg"]
    )
    assert result["per_label"]["pos"]["f1"] == pytest.approx(2 / 3)
    assert result["per_label"]["neg"]["f1"] == pytest.approx((1 + 1 + 2 / 3) / 3)
    assert result["macro"] == pytest.approx((2 / 3 + (8 / 3) / 3) / 2)


def test_human_f1_skips_items_without_a_task_label_majority():
    result = human_f1([["mixed"] * 3, ["pos"] * 3], ["mixed", "pos"], ["pos", "neg"])
    assert result["items"] == 1


@given(st.lists(st.integers(0, 1000)))
def test_histogram_median_matches_numpy(values):
    result = histogram_median(Counter(values))
    assert result is None if not values else result == pytest.approx(float(np.median(values)))
