import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics.contrast import Scored, bootstrap_intervals, contrast_metrics, per_label


def s(set_id, role, gold, predicted, *tags):  # type: ignore[no-untyped-def]
    return Scored(set_id, role, gold, predicted, tuple(tags))


HAND = [
    # set a: all right -> consistent
    s("a", "original", "pos", "pos"), s("a", "perturbed", "neg", "neg", "negation"),
    # set b: the original is wrong, the perturbation right -> NOT consistent
    s("b", "original", "pos", "neg"), s("b", "perturbed", "neg", "neg", "negation", "tense"),
    # set c: original right, one of two perturbations wrong -> not consistent
    s("c", "original", "neg", "neg"), s("c", "perturbed", "pos", "pos", "tense"),
    s("c", "perturbed", "pos", "neg", "negation"),
]  # fmt: skip


def test_metrics_worked_by_hand():
    m = contrast_metrics(HAND, ["pos", "neg"], samples=200)
    assert m["original_accuracy"] == pytest.approx(2 / 3)
    assert m["perturbed_accuracy"] == pytest.approx(3 / 4)
    assert m["drop"] == pytest.approx(2 / 3 - 3 / 4)
    assert m["consistency"] == pytest.approx(1 / 3)  # set b fails on its original alone
    assert m["counts"] == {"originals": 3, "perturbed": 4, "sets": 3}
    assert m["per_tag"] == {
        "negation": {"accuracy": pytest.approx(2 / 3), "count": 3},
        "tense": {"accuracy": 1.0, "count": 2},
    }


def test_per_label_precision_recall_f1_and_confusion():
    result = per_label(HAND, ["pos", "neg"])
    # gold pos: a-orig (pos), b-orig (neg), c-p1 (pos), c-p2 (neg); gold neg: 3 right.
    assert result["confusion"]["matrix"] == [[2, 2, 0], [0, 3, 0]]
    assert result["per_label"]["pos"] == {"precision": 1.0, "recall": 0.5,
                                          "f1": pytest.approx(2 / 3), "support": 4}  # fmt: skip
    assert result["per_label"]["neg"]["precision"] == pytest.approx(3 / 5)
    assert result["macro_f1"] == pytest.approx((2 / 3 + 0.75) / 2)
    other = per_label([s("x", "original", "pos", "maybe")], ["pos", "neg"])
    assert other["confusion"]["matrix"] == [[0, 0, 1], [0, 0, 0]]


def test_bootstrap_resamples_sets_not_examples():
    # One set: every resample of sets is that same set, so the intervals have zero width.
    # Resampling the five examples instead would give a wide interval around 0.6.
    one_set = [s("only", "original", "pos", "pos")] + [
        s("only", "perturbed", "neg", "neg" if i < 3 else "pos") for i in range(5)
    ]
    intervals = bootstrap_intervals(one_set, samples=500)
    assert intervals["perturbed_accuracy"] == [pytest.approx(0.6), pytest.approx(0.6)]
    assert intervals["consistency"] == [0.0, 0.0]


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    data = [e for i in range(40) for e in (
        s(f"s{i}", "original", "pos", "pos" if i % 4 else "neg"),
        s(f"s{i}", "perturbed", "neg", "neg" if i % 3 else "pos", "t"),
    )]  # fmt: skip
    first = bootstrap_intervals(data, samples=1000, seed=0)
    assert first == bootstrap_intervals(data, samples=1000, seed=0)
    assert first != bootstrap_intervals(data, samples=1000, seed=1)
    m = contrast_metrics(data, ["pos", "neg"])
    for name in ("original_accuracy", "perturbed_accuracy", "consistency"):
        low, high = first[name]
        assert low <= m[name] <= high and high - low > 0.05
    assert first["per_tag"]["t"] == first["perturbed_accuracy"]


sets = st.lists(
    st.tuples(st.booleans(), st.lists(st.tuples(st.booleans(), st.booleans()), max_size=4)),
    min_size=1, max_size=15,
)  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(sets)
def test_consistency_never_exceeds_original_or_perturbed_accuracy(data):
    examples = []
    for i, (orig_ok, perts) in enumerate(data):
        examples.append(s(str(i), "original", "pos", "pos" if orig_ok else "neg"))
        for ok, tagged in perts:
            tags = ("t",) if tagged else ()
            examples.append(s(str(i), "perturbed", "neg", "neg" if ok else "pos", *tags))
    m = contrast_metrics(examples, ["pos", "neg"], samples=50)
    assert 0 <= m["consistency"] <= m["original_accuracy"]
    all_perts = [ok for _, perts in data for ok, _ in perts]
    if all_perts:
        with_perts = [i for i, (_, perts) in enumerate(data) if perts]
        assert m["consistency"] * len(data) <= len(data) - len(with_perts) + sum(
            all(ok for ok, _ in data[i][1]) for i in with_perts
        )
    assert sum(v["count"] for v in m["per_tag"].values()) == sum(t for _, p in data for _, t in p)
