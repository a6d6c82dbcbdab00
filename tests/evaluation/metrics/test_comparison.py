"""Two runs' paired figures (evaluation/metrics/comparison.py): their values are each run's own
metrics (computed here by contrast.py, answers.py and pairs.py), they pair by example and
never by position, and the difference, interval and p-value behave as they must whatever the
runs (hypothesis)."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.contingency_tables import mcnemar

from annotation.text.answers import SQUAD
from evaluation.metrics.answers import ScoredAnswer, qa_metrics
from evaluation.metrics.comparison import Outcome, compare_runs
from evaluation.metrics.contrast import Scored, contrast_metrics
from evaluation.metrics.pairs import ScoredPair, pair_metrics

LABELS = ["negative", "positive", "neutral"]
FAST = {"samples": 300, "permutations": 300}
FIGURES = ("original_accuracy", "perturbed_accuracy", "drop", "consistency", "macro_f1")


def two_runs(seed: int, sets: int = 60, agree: float = 0.8) -> tuple[list[Outcome], list[Outcome]]:
    """Two classifiers' outcomes on the same sets: b keeps a's prediction with `agree`."""
    draw = random.Random(seed)
    a: list[Outcome] = []
    b: list[Outcome] = []
    for s in range(sets):
        for j in range(1 + draw.randint(1, 3)):
            role = "original" if j == 0 else "perturbed"
            gold = draw.choice(LABELS[:2])
            marked = role != "original"
            tags = tuple(t for t in ("negation", "quantifier") if marked and draw.random() < 0.5)
            first = gold if draw.random() < 0.75 else draw.choice(LABELS)
            second = first if draw.random() < agree else draw.choice(LABELS)
            for run, predicted in ((a, first), (b, second)):
                key = (f"{s}-{j}", role)
                run.append(Outcome(key, f"set-{s}", role, gold == predicted, tags, gold, predicted))
    return a, b


def as_scored(run: list[Outcome]) -> list[Scored]:
    return [Scored(o.set_id, o.role, o.gold, o.predicted, o.tags) for o in run]


@pytest.mark.parametrize("seed", range(5))
def test_each_value_is_the_runs_own_metric(seed):
    a, b = two_runs(seed)
    compared = compare_runs(a, b, kind="labels", labels=LABELS, **FAST)
    own = [contrast_metrics(as_scored(run), LABELS, samples=10) for run in (a, b)]
    for name in FIGURES:
        assert compared[name]["values"] == pytest.approx([m[name] for m in own], abs=1e-12)
        assert compared[name]["difference"] == pytest.approx(own[1][name] - own[0][name])
    for tag, row in compared["per_tag"].items():
        assert row["values"] == pytest.approx([m["per_tag"][tag]["accuracy"] for m in own])
    assert [w["drop"] for w in compared["within_run"]] == pytest.approx([m["drop"] for m in own])


def test_consistency_and_accuracy_are_tested_by_mcnemar_on_sets_and_on_examples():
    a, b = two_runs(7, sets=150)
    compared = compare_runs(a, b, kind="labels", labels=LABELS, **FAST)
    consistent = [{}, {}]  # type: list[dict[str, bool]]
    for run, by_set in zip((a, b), consistent, strict=True):
        for o in run:
            by_set[o.set_id] = by_set.get(o.set_id, True) and o.right
    x, y = (np.array(list(c.values())) for c in consistent)
    table = [[int(np.sum(x & y)), int(np.sum(x & ~y))], [int(np.sum(~x & y)), int(np.sum(~x & ~y))]]
    expected = mcnemar(table, exact=True).pvalue
    assert compared["consistency"]["p_value"] == pytest.approx(expected, rel=1e-12)
    assert compared["consistency"]["test"] == "McNemar exact, per set"
    originals = [(p.right, q.right) for p, q in zip(a, b, strict=True) if p.role == "original"]
    only_a = sum(1 for p, q in originals if p and not q)
    only_b = sum(1 for p, q in originals if q and not p)
    assert compared["original_accuracy"]["discordant"] == [only_a, only_b]
    assert compared["macro_f1"]["test"] == "paired permutation over sets"


def test_runs_pair_by_example_not_by_position():
    a, b = two_runs(3, sets=80)
    compared = compare_runs(a, b, kind="labels", labels=LABELS, **FAST)
    shuffled = b[:]
    random.Random(0).shuffle(shuffled)
    assert compare_runs(a, shuffled, kind="labels", labels=LABELS, **FAST) == compared

    # The same predictions of b, dealt to other examples: a wrong pairing changes the result.
    rights = [o.right for o in b]
    random.Random(1).shuffle(rights)
    dealt = [Outcome(o.key, o.set_id, o.role, r, o.tags) for o, r in zip(b, rights, strict=True)]
    wrong = compare_runs(a, dealt, kind="labels", **FAST)
    assert wrong["consistency"]["discordant"] != compared["consistency"]["discordant"]
    assert wrong["perturbed_accuracy"]["p_value"] != compared["perturbed_accuracy"]["p_value"]


def test_runs_on_different_examples_are_refused():
    a, b = two_runs(4, sets=10)
    with pytest.raises(ValueError, match="same examples"):
        compare_runs(a, b[:-1], kind="labels")
    moved = [Outcome(o.key, "elsewhere", o.role, o.right) for o in b]
    with pytest.raises(ValueError, match="different contrast sets"):
        compare_runs(a, moved, kind="labels")


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 40), st.floats(0, 1))
def test_differences_are_antisymmetric_and_intervals_hold_their_estimate(seed, sets, agree):
    a, b = two_runs(seed, sets=sets, agree=agree)
    forward = compare_runs(a, b, kind="labels", labels=LABELS, **FAST)
    backward = compare_runs(b, a, kind="labels", labels=LABELS, **FAST)
    for name in FIGURES:
        row, back = forward[name], backward[name]
        assert 0 <= row["p_value"] <= 1
        assert row["p_value"] == pytest.approx(back["p_value"])
        assert row["difference"] == pytest.approx(-back["difference"], abs=1e-12)
        low, high = row["interval"]
        assert [-high, -low] == pytest.approx(back["interval"], abs=1e-9)
        assert low - 1e-9 <= row["difference"] <= high + 1e-9
    assert forward["discordance"] == backward["discordance"]


def test_free_text_figures_are_the_runs_qa_metrics():
    draw = random.Random(2)
    runs: list[list] = [[], []]
    scored: list[list] = [[], []]
    for s in range(40):
        for j, role in enumerate(("original", "perturbed", "perturbed")):
            gold = ("the red house",)
            for i, answer in enumerate(draw.sample(["the red house", "red", "a house", "blue"], 2)):
                answer_ = ScoredAnswer(f"s{s}", role, gold, answer, ("entity",) if j else ())
                scored[i].append(answer_)
                em, f1 = answer_.em, answer_.f1
                right = SQUAD.right(em, f1)
                key = (str(s), str(j))
                runs[i].append(Outcome(key, f"s{s}", role, right, answer_.tags, em=em, f1=f1))
    compared = compare_runs(*runs, kind="answers", **FAST)
    own = [qa_metrics(x, samples=10) for x in scored]
    for name in ("original_em", "original_f1", "perturbed_em", "perturbed_f1", "consistency"):
        assert compared[name]["values"] == pytest.approx([m[name] for m in own])
    assert compared["original_em"]["test"] == "McNemar exact, per example"
    assert compared["perturbed_f1"]["test"] == "paired permutation over sets"
    tag = compared["per_tag"]["entity"]
    assert tag["values"] == pytest.approx([m["per_tag"]["entity"]["f1"] for m in own])


def test_minimal_pair_figures_are_the_runs_pair_metrics():
    draw = random.Random(5)
    pairs: list[list[ScoredPair]] = [[], []]
    for s in range(50):
        for _ in range(draw.randint(1, 3)):
            for run in pairs:
                run.append(ScoredPair(f"s{s}", draw.random(), draw.random(), ("agreement",)))
    runs = [
        [Outcome((str(k),), p.set_id, "perturbed", p.right, p.tags) for k, p in enumerate(run)]
        for run in pairs
    ]
    compared = compare_runs(*runs, kind="pairs", **FAST)
    own = [pair_metrics(run, samples=10) for run in pairs]
    for name in ("pair_accuracy", "consistency"):
        assert compared[name]["values"] == pytest.approx([m[name] for m in own])
    assert compared["pair_accuracy"]["test"] == "McNemar exact, per pair"
    assert compared["within_run"] == []
