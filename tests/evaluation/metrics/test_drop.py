"""DROP's EM/F1 (docs/metrics.md) against an independent implementation: lm-evaluation-harness's
port of DROP's official drop_eval.py, on hand-picked cases and on random answers."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lm_eval.tasks.drop.utils import get_metrics

from evaluation.metrics.answers import ScoredAnswer
from evaluation.metrics.drop import drop_best, drop_em_f1

CASES = [
    ("2", "2"),  # numbers as numbers
    ("2.0", "2"),
    ("two", "2"),
    ("the 1,615 men", "1615"),  # a number only matches itself
    ("1615 men", "1615"),
    ("soldiers", ["soldiers"]),
    (["Traci", "Gibson"], ["Gibson", "Traci"]),  # spans in any order
    ("Traci and Gibson", ["Traci", "Gibson"]),  # one predicted span for two gold
    (["a b", "c"], ["a", "b c", "d"]),
    ("March 1565", "March 1, 1565"),
    ("well-known", "well known"),  # hyphens split tokens
    ("", "x"),
]


@pytest.mark.parametrize(("predicted", "gold"), CASES)
def test_drop_em_f1_equals_the_harness_port_of_drop_eval(predicted, gold):
    em, f1 = get_metrics(predicted, gold)
    assert drop_em_f1(predicted, gold) == (em, pytest.approx(f1))


WORDS = st.sampled_from(["the", "a", "2", "2.0", "1,000", "Traci", "gibson", "well-known", "-",
                         "cats", "dog.", "3", "x"])  # fmt: skip
SPAN = st.lists(WORDS, min_size=1, max_size=4).map(" ".join)
ANSWER = st.one_of(SPAN, st.lists(SPAN, min_size=1, max_size=3))


@settings(max_examples=300, deadline=None)
@given(ANSWER, ANSWER)
def test_random_answers_score_as_the_harness_port_scores_them(predicted, gold):
    em, f1 = get_metrics(predicted, gold)
    assert drop_em_f1(predicted, gold) == (em, pytest.approx(f1))


@settings(max_examples=100, deadline=None)
@given(ANSWER, st.lists(ANSWER, min_size=1, max_size=3))
def test_alternatives_take_the_best_em_and_the_best_f1_each(predicted, golds):
    pairs = [get_metrics(predicted, g) for g in golds]
    em, f1 = drop_best(predicted, golds)
    assert em == max(p[0] for p in pairs) and f1 == pytest.approx(max(p[1] for p in pairs))
    scored = ScoredAnswer("s", "original", tuple(golds), predicted, normalization="drop")
    assert (scored.em, scored.f1) == (em, f1)
