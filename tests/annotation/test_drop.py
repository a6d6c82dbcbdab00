"""DROP's EM/F1 (docs/metrics.md) against two independent implementations: lm-evaluation-
harness's port of DROP's official drop_eval.py, and the metric's definition written here (every
one-to-one pairing of the spans tried, where the product solves an assignment problem), on
hand-picked cases and on random answers."""

import itertools
import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lm_eval.tasks.drop.utils import get_metrics

from annotation.text.answers import AnswerRules, drop_best, drop_em_f1
from evaluation.metrics.answers import ScoredAnswer


def _number(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def by_hand(predicted, gold):  # type: ignore[no-untyped-def]
    """DROP's EM and F1 from the definition: tokens split on spaces and hyphens, lower-cased,
    punctuation dropped unless a number, numbers as floats, articles dropped; EM on the sets of
    normalised spans; F1 the best one-to-one pairing of span bags (a gold bag's numbers must meet
    the predicted bag's), averaged over the larger side, rounded to two decimals."""

    def span(text):  # type: ignore[no-untyped-def]
        out = []
        for token in re.split(" |-", text):
            token = token.lower()
            if _number(token) is None:
                token = "".join(c for c in token if c not in string.punctuation)
            if _number(token) is not None:
                token = str(float(token))
            token = " ".join(re.sub(r"\b(a|an|the)\b", " ", token).split())
            if token.strip():
                out.append(token)
        return " ".join(out)

    ps = [span(t) for t in ([predicted] if isinstance(predicted, str) else predicted)]
    gs = [span(t) for t in ([gold] if isinstance(gold, str) else gold)]
    em = float(sorted(set(ps)) == sorted(set(gs)) and len(ps) == len(gs))

    def f1(p, g):  # type: ignore[no-untyped-def]
        p, g = set(p.split()), set(g.split())
        numbers = {w for w in g if _number(w) is not None}
        if numbers and not numbers & {w for w in p if _number(w) is not None}:
            return 0.0
        common = len(p & g)
        precision = common / len(p) if p else 1.0
        recall = common / len(g) if g else 1.0
        return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)

    size = max(len(ps), len(gs))
    padded_p = ps + [None] * (size - len(ps))
    best = max(
        sum(f1(p, g) for p, g in zip(order, gs, strict=False) if p is not None)
        for order in itertools.permutations(padded_p)
    )
    return em, round(best / size, 2)


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
def test_drop_em_f1_equals_the_harness_port_and_the_definition(predicted, gold):
    em, f1 = get_metrics(predicted, gold)
    assert drop_em_f1(predicted, gold) == (em, pytest.approx(f1))
    assert by_hand(predicted, gold) == (em, pytest.approx(f1))


WORDS = st.sampled_from(["the", "a", "2", "2.0", "1,000", "Traci", "gibson", "well-known", "-",
                         "cats", "dog.", "3", "x"])  # fmt: skip
SPAN = st.lists(WORDS, min_size=1, max_size=4).map(" ".join)
ANSWER = st.one_of(SPAN, st.lists(SPAN, min_size=1, max_size=3))


@settings(max_examples=300, deadline=None)
@given(ANSWER, ANSWER)
def test_random_answers_score_as_the_harness_port_and_the_definition_score_them(predicted, gold):
    em, f1 = get_metrics(predicted, gold)
    assert drop_em_f1(predicted, gold) == (em, pytest.approx(f1))
    assert by_hand(predicted, gold) == (em, pytest.approx(f1))


@settings(max_examples=100, deadline=None)
@given(ANSWER, st.lists(ANSWER, min_size=1, max_size=3))
def test_alternatives_take_the_best_em_and_the_best_f1_each(predicted, golds):
    pairs = [get_metrics(predicted, g) for g in golds]
    em, f1 = drop_best(predicted, golds)
    assert em == max(p[0] for p in pairs) and f1 == pytest.approx(max(p[1] for p in pairs))
    scored = ScoredAnswer("s", "original", tuple(golds), predicted, rules=AnswerRules("drop"))
    assert (scored.em, scored.f1) == (em, f1)
