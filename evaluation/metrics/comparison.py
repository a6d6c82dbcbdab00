"""Two runs on the same release and split, figure by figure (docs/metrics.md, "Comparing two
runs"): each figure's values, the difference b - a, its paired bootstrap interval and a paired
test, per tag too (Holm-adjusted over the tags); and each run's own drop with the same paired
treatment. Pure functions over plain data, with the runs' own definitions: a figure's value
here equals the run's metric of the same name (evaluation/metrics/contrast.py, answers.py,
pairs.py)."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaluation.metrics.contrast import percentile_interval, safe_ratio
from evaluation.metrics.paired import (
    PAIRED_SAMPLES,
    PAIRED_SEED,
    PERMUTATIONS,
    Figure,
    bootstrap_sums,
    holm,
    mcnemar_exact,
    paired_interval,
    permutation_p,
    role_permutation_test,
    swapped_sums,
)

PERMUTATION = "paired permutation over sets"


@dataclass(frozen=True)
class Outcome:
    """One scored unit of a run: an example, or a minimal pair (role "perturbed"). `key` pairs
    it with the other run's (an example's id and role; a pair's two ids)."""

    key: tuple[str, ...]
    set_id: str
    role: str  # "original" or "perturbed"
    right: bool  # for accuracy and consistency: the run's own rule
    tags: tuple[str, ...] = field(default=())
    gold: str = ""
    predicted: str = ""
    em: float | None = None  # free text
    f1: float | None = None


class Table:
    """A row per contrast set, a column per count; a figure reads summed rows by column name."""

    def __init__(self, names: list[str], n_sets: int) -> None:
        self.column = {name: j for j, name in enumerate(names)}
        self.rows = np.zeros((n_sets, len(names)))

    def add(self, i: int, name: str, value: float) -> None:
        self.rows[i, self.column[name]] += value

    def of(self, summed: np.ndarray, name: str) -> np.ndarray:
        return summed[..., self.column[name]]

    def share(self, numerator: str, denominator: str) -> Figure:
        return lambda s: safe_ratio(self.of(s, numerator), self.of(s, denominator))


def macro_f1(matrix: np.ndarray) -> np.ndarray:
    """contrast.per_label's macro F1 from confusion counts (..., labels, labels + 1)."""
    labels = matrix.shape[-2]
    tp = np.diagonal(matrix[..., :labels], axis1=-2, axis2=-1)
    predicted, actual = matrix[..., :labels].sum(axis=-2), matrix.sum(axis=-1)
    precision = np.where(predicted > 0, tp / np.maximum(predicted, 1), 0.0)
    recall = np.where(actual > 0, tp / np.maximum(actual, 1), 0.0)
    both = precision + recall
    f1 = np.where(both > 0, 2 * precision * recall / np.where(both > 0, both, 1), 0.0)
    return f1.mean(axis=-1)


def _columns(kind: str, tags: list[str], labels: Sequence[str]) -> list[str]:
    names = ["sets", "consistent", "orig_n", "pert_n"]
    if kind == "answers":
        names += ["orig_em", "orig_f1", "pert_em", "pert_f1"]
        names += [f"{tag}:{c}" for tag in tags for c in ("n", "f1")]
    else:
        names += ["orig_ok", "pert_ok"] + [f"{tag}:{c}" for tag in tags for c in ("n", "ok")]
        names += [f"conf:{i}" for i in range(len(labels) * (len(labels) + 1))]
    return names


def set_table(
    outcomes: Sequence[Outcome],
    order: dict[str, int],
    kind: str,
    tags: list[str],
    labels: Sequence[str] = (),
) -> Table:
    """Per-set sums of one run's outcomes; `order` gives each set its row."""
    table = Table(_columns(kind, tags, labels), len(order))
    consistent = np.ones(len(order), dtype=bool)
    index = {label: i for i, label in enumerate(labels)}
    score = "f1" if kind == "answers" else "ok"
    for o in outcomes:
        i, role = order[o.set_id], "orig" if o.role == "original" else "pert"
        consistent[i] &= o.right
        table.add(i, f"{role}_n", 1)
        value = (o.f1 or 0.0) if kind == "answers" else float(o.right)
        if kind == "answers":
            table.add(i, f"{role}_em", o.em or 0.0)
        table.add(i, f"{role}_{score}", value)
        if o.gold in index:
            cell = index[o.gold] * (len(labels) + 1) + index.get(o.predicted, len(labels))
            table.add(i, f"conf:{cell}", 1)
        for tag in o.tags if role == "pert" else ():
            table.add(i, f"{tag}:n", 1)
            table.add(i, f"{tag}:{score}", value)
    table.rows[:, table.column["sets"]] = 1
    table.rows[:, table.column["consistent"]] = consistent
    return table


def _everything(o: Outcome) -> bool:
    return True


def _right(o: Outcome) -> bool:
    return o.right


@dataclass(frozen=True)
class Compared:
    """One figure: what it is of the summed rows, and McNemar's units where it is a share of
    right units: "set" (consistency), or the outcomes `pick` keeps, right by `value`; None
    (F1-type figures, the drop) means the permutation test over sets."""

    name: str
    figure: Figure
    units: str | None = None
    pick: Callable[[Outcome], bool] = _everything
    value: Callable[[Outcome], bool] = _right


def _original(o: Outcome) -> bool:
    return o.role == "original"


def _perturbed(o: Outcome) -> bool:
    return o.role == "perturbed"


def _exact(o: Outcome) -> bool:
    return o.em == 1.0


def compared_figures(
    kind: str, table: Table, labels: Sequence[str], binary_em: bool
) -> list[Compared]:
    """The figures a run of this kind reports, by the run's names (docs/metrics.md)."""
    share = table.share
    consistency = Compared("consistency", share("consistent", "sets"), "set")
    if kind == "pairs":
        return [
            Compared("pair_accuracy", share("pert_ok", "pert_n"), "pair", _perturbed),
            consistency,
        ]
    if kind == "answers":
        em = "example" if binary_em else None
        return [
            Compared("original_em", share("orig_em", "orig_n"), em, _original, _exact),
            Compared("original_f1", share("orig_f1", "orig_n")),
            Compared("perturbed_em", share("pert_em", "pert_n"), em, _perturbed, _exact),
            Compared("perturbed_f1", share("pert_f1", "pert_n")),
            consistency,
        ]
    original, perturbed = share("orig_ok", "orig_n"), share("pert_ok", "pert_n")
    out = [
        Compared("original_accuracy", original, "example", _original),
        Compared("perturbed_accuracy", perturbed, "example", _perturbed),
        Compared("drop", lambda s: original(s) - perturbed(s)),
        consistency,
    ]
    if labels:
        confusion = [table.column[f"conf:{i}"] for i in range(len(labels) * (len(labels) + 1))]
        shape = (len(labels), len(labels) + 1)
        figure = lambda s: macro_f1(s[..., confusion].reshape(*s.shape[:-1], *shape))  # noqa: E731
        out.append(Compared("macro_f1", figure))
    return out


def tag_figure(kind: str, table: Table, tag: str) -> Compared:
    """A tag's accuracy over the perturbations (or pairs) it marks; its F1 for free text."""
    if kind == "answers":
        return Compared(tag, table.share(f"{tag}:f1", f"{tag}:n"))
    unit = "pair" if kind == "pairs" else "example"
    return Compared(
        tag, table.share(f"{tag}:ok", f"{tag}:n"), unit, lambda o: _perturbed(o) and tag in o.tags
    )


def aligned(a: Sequence[Outcome], b: Sequence[Outcome]) -> list[Outcome]:
    """b's outcomes in a's order, paired by key. ValueError where the runs did not score the
    same units of the same sets: pairing by position would compare unrelated examples."""
    by_key = {o.key: o for o in b}
    keys = {o.key for o in a}
    if len(by_key) != len(b) or len(keys) != len(a) or by_key.keys() != keys:
        raise ValueError("The two runs did not score the same examples.")
    out = [by_key[o.key] for o in a]
    if any(x.set_id != y.set_id for x, y in zip(a, out, strict=True)):
        raise ValueError("The two runs put an example in different contrast sets.")
    return out


def _number(value: Any) -> float | None:
    value = float(value)
    return None if np.isnan(value) else value


@dataclass(frozen=True)
class Pairing:
    """Two runs' tables and aligned outcomes, with their draws made once for every figure."""

    a: Table
    b: Table
    outcomes: tuple[Sequence[Outcome], Sequence[Outcome]]
    drawn: tuple[np.ndarray, np.ndarray]  # the bootstrap's sums
    swapped: tuple[np.ndarray, np.ndarray]  # the permutation test's sums
    level: float


def compare_figure(c: Compared, pairing: Pairing) -> dict[str, Any]:
    """values [a, b], difference b - a, paired interval, p-value and the test's name."""
    a, b = pairing.a, pairing.b
    values = [_number(c.figure(t.rows.sum(axis=0))) for t in (a, b)]
    difference = None if None in values else values[1] - values[0]  # type: ignore[operator]
    out: dict[str, Any] = {
        "values": values,
        "difference": difference,
        "interval": paired_interval(pairing.drawn, c.figure, pairing.level),
    }
    if c.units is None:
        p = permutation_p(a.rows, b.rows, pairing.swapped, c.figure)
        return out | {"p_value": p, "test": PERMUTATION}
    if c.units == "set":
        column = a.column["consistent"]
        mcnemar = mcnemar_exact(a.rows[:, column] > 0, b.rows[:, column] > 0)
    else:
        a_units, b_units = pairing.outcomes
        picked = [
            (c.value(x), c.value(y)) for x, y in zip(a_units, b_units, strict=True) if c.pick(x)
        ]
        mcnemar = mcnemar_exact([x for x, _ in picked], [y for _, y in picked])
    return out | {
        "p_value": mcnemar[0],
        "test": f"McNemar exact, per {c.units}",
        "discordant": list(mcnemar[1:]),
    }


def within_run_drop(table: Table, drawn: np.ndarray, **options: Any) -> dict[str, Any]:
    """One run's drop, originals against their own sets' perturbations: its values over the
    comparison's bootstrap draws of sets (`drawn`), and the permutation of roles within sets
    (paired.role_permutation_test)."""
    rows, of = table.rows, table.column
    originals, perturbed = rows[:, of["orig_n"]], rows[:, of["pert_n"]]
    right, right_perturbed = rows[:, of["orig_ok"]], rows[:, of["pert_ok"]]
    share = table.share

    def drop(s: np.ndarray) -> np.ndarray:
        return share("orig_ok", "orig_n")(s) - share("pert_ok", "pert_n")(s)

    p = role_permutation_test(
        originals,
        right,
        originals + perturbed,
        right + right_perturbed,
        permutations=options["permutations"],
        seed=options["seed"],
    )
    interval = percentile_interval(drop(drawn), options["level"])  # the comparison's draws
    return {
        "drop": _number(drop(rows.sum(axis=0))),
        "interval": interval,
        "p_value": p,
        "test": "permutation of roles within sets",
    }


def compare_runs(
    a: Sequence[Outcome],
    b: Sequence[Outcome],
    *,
    kind: str,
    labels: Sequence[str] = (),
    samples: int = PAIRED_SAMPLES,
    permutations: int = PERMUTATIONS,
    seed: int = PAIRED_SEED,
    level: float = 0.95,
) -> dict[str, Any]:
    """Every figure of two runs of one `kind` ("labels", "answers" or "pairs") on the same
    units, paired by key; per tag, with Holm's adjustment over the tags (`p_holm`); each run's
    within-run drop (labels); and the discordance: the share of sets consistent in one run
    only, what the power of McNemar's test on consistency depends on."""
    paired_b = aligned(a, b)
    order: dict[str, int] = {}
    for o in a:
        order.setdefault(o.set_id, len(order))
    tags = sorted({tag for o in a if o.role == "perturbed" for tag in o.tags})
    runs = (set_table(a, order, kind, tags, labels), set_table(paired_b, order, kind, tags, labels))
    binary_em = all(o.em in (None, 0.0, 1.0) for o in [*a, *paired_b])
    options = {"samples": samples, "permutations": permutations, "seed": seed, "level": level}
    rows = (runs[0].rows, runs[1].rows)
    pairing = Pairing(
        *runs,
        outcomes=(a, paired_b),
        drawn=bootstrap_sums(*rows, samples=samples, seed=seed),
        swapped=swapped_sums(*rows, permutations=permutations, seed=seed),
        level=level,
    )
    out: dict[str, Any] = {
        c.name: compare_figure(c, pairing)
        for c in compared_figures(kind, runs[0], labels, binary_em)
    }
    per_tag = {tag: compare_figure(tag_figure(kind, runs[0], tag), pairing) for tag in tags}
    for row, adjusted in zip(
        per_tag.values(), holm([row["p_value"] for row in per_tag.values()]), strict=True
    ):
        row["p_holm"] = adjusted
    column = runs[0].column["consistent"]
    discordant = runs[0].rows[:, column] != runs[1].rows[:, column]
    return out | {
        "per_tag": per_tag,
        "within_run": (
            [within_run_drop(t, d, **options) for t, d in zip(runs, pairing.drawn, strict=True)]
            if kind == "labels"
            else []
        ),
        "sets": len(order),
        "discordance": float(discordant.mean()) if len(order) else None,
        "samples": samples,
        "permutations": permutations,
        "seed": seed,
        "level": level,
    }
