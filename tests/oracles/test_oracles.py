"""The oracles themselves, on figures worked by hand from their definitions: a wrong oracle
would pass a wrong product."""

import pytest

from tests.oracles.consistency import consistency
from tests.oracles.squad import best_exact_match, best_f1, f1_score, normalize_answer


def test_squad_normalisation_drops_case_punctuation_articles_and_extra_space():
    assert normalize_answer("  The Cat,  sat on AN old-mat. ") == "cat sat on oldmat"
    assert normalize_answer("Theatre a") == "theatre"  # an article only as a whole word
    assert normalize_answer("The A", articles=False) == "the a"  # ROPES keeps them


def test_squad_f1_is_over_token_bags_and_zero_without_a_shared_token():
    # prediction {cat, sat}, gold {cat, sat, down}: precision 1, recall 2/3, F1 0.8
    assert f1_score("the cat sat", "a cat sat down") == pytest.approx(0.8)
    # bags, not sets: "x x y" and "x y" share 2 tokens; precision 2/3, recall 1
    assert f1_score("x x y", "x y") == pytest.approx(0.8)
    assert f1_score("cat", "dog") == 0.0
    assert f1_score("the", "a") == 0.0  # v1.1: no shared token, whatever the lengths


def test_squad_takes_the_best_gold_answer():
    assert best_exact_match("Pierre", ["Pierre Curie", "pierre."]) == 1.0
    assert best_f1("Marie", ["Pierre Curie", "Marie Curie"]) == pytest.approx(2 / 3)


def test_a_set_is_consistent_only_when_every_member_is_right():
    members = [("a", True), ("a", True), ("b", True), ("b", False), ("c", False), ("d", True)]
    assert consistency(members) == pytest.approx(2 / 4)
    assert consistency([("a", False), ("a", True)]) == 0.0
