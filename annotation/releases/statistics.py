"""A release's statistics (its card's figures): agreement per split over the released
perturbations, the annotators' time, and the pseudonyms that name them publicly."""

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np
from django.db.models import Count, Max

from annotation.models import Project, Pseudonym, Release, ReleaseEntry, Vote
from annotation.releases import records
from annotation.text.answers import AnswerRules
from annotation.validation.agreement import NAN, f1_means, histogram_median, row_sums
from annotation.validation.answer_stats import answer_block, responses_of
from annotation.validation.stats import agreement_block


def pseudonyms(project: Project, kind: str, user_ids: set[int]) -> dict[int, str]:
    """Stable public names, created on first release: expert-1, validator-7, ..."""
    known = dict(
        Pseudonym.objects.filter(project=project, kind=kind).values_list("user_id", "number")
    )
    missing = sorted(user_ids - set(known))
    if missing:
        top = Pseudonym.objects.filter(project=project, kind=kind).aggregate(m=Max("number"))["m"]
        new = [
            Pseudonym(project=project, user_id=uid, kind=kind, number=(top or 0) + n)
            for n, uid in enumerate(missing, start=1)
        ]
        Pseudonym.objects.bulk_create(new)
        known.update({p.user_id: p.number for p in new})
    return {uid: f"{kind}-{number}" for uid, number in known.items() if uid in user_ids}


def release_statistics(
    project: Project,
    release: Release,
    chosen: list[records.Chosen],
    seconds: Counter[int],
    total_seconds: int,
) -> dict[str, Any]:
    """Agreement per split over the released perturbations, and the annotators' time (their
    recorded seconds above 0, as a histogram, and their total). Names the validators with
    pseudonyms, creating those not named yet."""
    per_split: dict[str, Any] = {}
    for split in sorted({c.split for c in chosen}):
        members = [c for c in chosen if c.split == split and c.votes]
        if project.is_free_text:
            per_split[split] = _answer_agreement(project, members)
            continue
        per_split[split] = agreement_block(
            {c.perturbation_id: c.votes for c in members},
            {c.perturbation_id: c.label for c in members},
            project.all_labels,
            project.labels,
            project.setting("votes_per_item"),
        )
    return figures(project, release, per_split, seconds, total_seconds)


def figures(
    project: Project,
    release: Release,
    per_split: dict[str, Any],
    seconds: Counter[int],
    total_seconds: int,
    histogram: Iterable[tuple[int, int, int]] | None = None,
) -> dict[str, Any]:
    """The statistics of a release with its agreement per split, from its perturbations'
    recorded seconds (a histogram of those above 0) and their total, and the votes on them
    as (validator, seconds, votes), if already counted."""
    # Who voted, and how long each vote took, from one small histogram query over the votes on
    # the items of the release's perturbations.
    if histogram is None:
        released = ReleaseEntry.objects.filter(release=release).values("perturbation_id")
        histogram = (
            Vote.objects.filter(item__perturbation_id__in=released)
            .values_list("validator_id", "seconds_spent")
            .annotate(n=Count("id"))
            .order_by()
        )
    validators: set[int] = set()
    vote_seconds: Counter[int] = Counter()
    for validator_id, spent, n in histogram:
        validators.add(validator_id)
        vote_seconds[spent] += n
    return {
        "per_split": per_split,
        "validators": len(pseudonyms(project, "validator", validators)),
        # 0 s is no time recorded (an imported edit, a client that sent none), not a time.
        "median_seconds_per_perturbation": histogram_median(seconds),
        "total_hours_authoring": round(total_seconds / 3600, 2),
        "median_seconds_per_vote": histogram_median(vote_seconds),
    }


def _answer_agreement(project: Project, members: list[records.Chosen]) -> dict[str, Any]:
    responses = responses_of(
        project, item__perturbation_id__in=[c.perturbation_id for c in members]
    )
    return answer_block(
        responses,
        dict.fromkeys(responses, True),
        project.setting("votes_per_item"),
        AnswerRules.of(project),
    )


class SplitAgreement:
    """agreement_block's figures for one split of a label project's release, given its vote
    table a block of rows at a time, in the release's order, so that memory holds one block:
    Fleiss' kappa and Krippendorff's alpha from the table's distinct rows, each weighted by how
    often it occurs (equal to the table's to the 4 decimals kept), and the human F1 as
    human_f1_table computes it, its seeded shuffle drawn block by block from one generator
    over rows `width` wide (its most responses on an item): the same numbers, in the same
    order, so the same figures."""

    def __init__(self, project: Project, width: int):
        self.votes_per_item = project.setting("votes_per_item")
        self.n_labels, self.width = len(project.labels), width
        self.n_categories = len(project.all_labels)
        self.rng = np.random.default_rng(1)
        self.rows: Counter[tuple[int, ...]] = Counter()
        # Per synthetic annotator and label: true positives, predictions, gold labels.
        self.scored = np.zeros((3, width, self.n_labels), dtype=np.int64)
        self.f1_items = 0

    def add(self, table: np.ndarray, gold: np.ndarray) -> None:
        """Rows of counted votes (task labels first) and each row's majority column (-1:
        none), as agreement_figures takes them."""
        distinct, n = np.unique(table, axis=0, return_counts=True)
        for row, times in zip(distinct.tolist(), n.tolist(), strict=True):
            self.rows[tuple(row)] += times
        kept = (gold >= 0) & (gold < self.n_labels) & (row_sums(table) > 0)
        counts, gold = table[kept], gold[kept]
        if not len(gold):
            return
        self.f1_items += len(gold)
        lengths = row_sums(counts)
        categories = np.minimum(np.arange(counts.shape[1]), self.n_labels)
        flat = np.repeat(np.tile(categories, len(counts)), counts.ravel())
        rows = np.repeat(np.arange(len(counts)), lengths)
        position = np.arange(len(flat)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        answers = np.full((len(counts), self.width), -1, dtype=np.int64)
        answers[rows, position] = flat
        keys = self.rng.random(answers.shape)
        keys[answers < 0] = 2.0
        answers = np.take_along_axis(answers, np.argsort(keys, axis=1), axis=1)
        for a in range(self.width):
            answered = answers[:, a] >= 0
            predicted, truth = answers[answered, a], gold[answered]
            for j in range(self.n_labels):
                self.scored[0, a, j] += np.count_nonzero((predicted == j) & (truth == j))
                self.scored[1, a, j] += np.count_nonzero(predicted == j)
                self.scored[2, a, j] += np.count_nonzero(truth == j)

    def block(self, task_labels: list[str]) -> dict[str, Any]:
        rows = np.array(list(self.rows), dtype=float).reshape(len(self.rows), self.n_categories)
        weights = np.array(list(self.rows.values()), dtype=float)
        complete = rows.sum(axis=1) == self.votes_per_item
        items = int(weights[complete].sum())
        kappa = _kappa(rows[complete], weights[complete], self.votes_per_item)
        f1 = self._f1(task_labels)
        return {
            "items": items,
            "fleiss_kappa": _finite(kappa) if items and self.votes_per_item > 1 else None,
            "krippendorff_alpha": _finite(_alpha(rows, weights)) if len(rows) else None,
            "human_f1": {
                "macro": _finite(f1[0]),
                "per_label": {
                    label: {k: round(v, 4) for k, v in scores.items()}
                    for label, scores in f1[1].items()
                },
            },
        }

    def _f1(self, labels: list[str]) -> tuple[float, dict[str, dict[str, float]]]:
        """human_f1_table's macro F1 and per-label means over the synthetic annotators."""
        if not self.f1_items:
            return NAN, {}
        return f1_means(np.moveaxis(self.scored, 0, -1), labels)


def _kappa(rows: np.ndarray, weights: np.ndarray, n: int) -> float:
    """fleiss_kappa over the rows, each counted `weights` times (n votes in every row)."""
    items = weights.sum()
    if not items or n < 2:
        return NAN
    p_bar = (weights * (rows * (rows - 1)).sum(axis=1)).sum() / (n * (n - 1)) / items
    p_e = float(((weights @ rows / (items * n)) ** 2).sum())
    return NAN if math.isclose(p_e, 1.0) else float((p_bar - p_e) / (1 - p_e))


def _alpha(rows: np.ndarray, weights: np.ndarray) -> float:
    """krippendorff_alpha_nominal over the rows, each counted `weights` times."""
    m = rows.sum(axis=1)
    rows, weights, m = rows[m >= 2], weights[m >= 2], m[m >= 2]
    if not len(rows):
        return NAN
    n_c = weights @ rows
    o_diag = ((rows * (rows - 1)) * (weights / (m - 1))[:, None]).sum(axis=0)
    n = n_c.sum()
    expected = (n**2 - (n_c**2).sum()) / (n - 1)
    return NAN if expected == 0 else float(1 - (n - o_diag.sum()) / expected)


def _finite(value: float) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), 4)
