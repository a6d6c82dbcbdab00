"""Contrast consistency (Gardner et al., 2020, "Evaluating Models' Local Decision Boundaries
via Contrast Sets", §4; docs/metrics.md): a contrast set is its original with its perturbations;
a model is consistent on a set when it is right on every member of it; consistency is the share
of sets on which it is."""

from collections.abc import Hashable, Iterable


def consistency(members: Iterable[tuple[Hashable, bool]]) -> float:
    """`members`: (set id, right) for each example scored."""
    right_throughout: dict[Hashable, bool] = {}
    for set_id, right in members:
        right_throughout[set_id] = right_throughout.get(set_id, True) and bool(right)
    return sum(right_throughout.values()) / len(right_throughout)
