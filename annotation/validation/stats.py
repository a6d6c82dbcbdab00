"""Project statistics (docs/validation.md): gathers votes from the database, then calls the pure
functions of annotation.validation.agreement. Aggregation happens in SQL so that 500k votes
stay fast."""

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.db.models import BooleanField, Count, ExpressionWrapper, Q

from annotation.bulk import jit_off
from annotation.crowd.gates import gate_figures
from annotation.models import (
    Perturbation,
    Project,
    Tag,
    ValidationItem,
    ValidatorStatus,
    VoteSeconds,
)
from annotation.validation.agreement import (
    capped_histogram,
    fleiss_kappa,
    histogram_median,
    human_f1_table,
    krippendorff_alpha_nominal,
    row_sums,
    value_histogram,
)
from annotation.validation.answer_stats import answer_stats
from annotation.validation.services.quality import agreement_of

Status = Perturbation.Status
ItemStatus = ValidationItem.Status
NOT_WRITTEN = [Status.DRAFT, Status.WITHDRAWN]  # perturbations that were never submitted
HAS_CONTROL = ExpressionWrapper(Q(control__isnull=False), output_field=BooleanField())


def _finite(value: float) -> float | None:
    return None if value is None or np.isnan(value) else round(float(value), 4)


def agreement_block(
    counts: dict[int, dict[str, int]],
    majorities: dict[int, str],
    categories: list[str],
    task_labels: list[str],
    votes_per_item: int,
) -> dict[str, Any]:
    """Kappa, alpha and human F1 over items given as item -> {label: counted votes}."""
    index = {label: j for j, label in enumerate(categories)}
    table = np.zeros((len(counts), len(categories)), dtype=np.int64)
    for row, per_label in enumerate(counts.values()):
        for label, n in per_label.items():
            table[row, index[label]] = n
    gold = np.array([index.get(majorities.get(i, ""), -1) for i in counts], dtype=np.int64)
    return agreement_figures(table, gold, categories, task_labels, votes_per_item)


def agreement_figures(
    table: np.ndarray,
    gold: np.ndarray,
    categories: list[str],
    task_labels: list[str],
    votes_per_item: int,
) -> dict[str, Any]:
    """Kappa, alpha and human F1 over table[i, c] = counted votes of category c on item i,
    with gold[i] = the column of item i's majority label (-1: none)."""
    complete = table[row_sums(table) == votes_per_item] if len(table) else table
    # Task labels come first in `categories`, so their columns are the table's first ones.
    assert list(categories[: len(task_labels)]) == list(task_labels)
    f1 = human_f1_table(table, gold, list(task_labels), seed=1)
    return {
        "items": len(complete),
        # Agreement needs two votes an item: with votes_per_item 1 it is not defined (None).
        "fleiss_kappa": _finite(fleiss_kappa(complete))
        if len(complete) and votes_per_item > 1
        else None,
        "krippendorff_alpha": _finite(krippendorff_alpha_nominal(table)) if len(table) else None,
        "human_f1": {
            "macro": _finite(f1["macro"]),  # type: ignore[arg-type]
            "per_label": {
                label: {k: round(v, 4) for k, v in scores.items()}
                for label, scores in f1["per_label"].items()  # type: ignore[attr-defined]
            },
        },
    }


@dataclass
class Items:
    """A project's items as columns: what every figure reads of them."""

    status: np.ndarray
    majority: np.ndarray
    split: np.ndarray
    gold: np.ndarray
    is_control: np.ndarray
    # Label projects: votes[i, c] = the counted votes of item i for category c
    votes: np.ndarray
    # Free-text projects only: id -> the item's row, answers included, in the columns' order
    rows: dict[int, dict[str, Any]]
    splits: list[str]  # the splits that hold items, in order


COLUMNS = ["status", "majority_label", "split", "gold_label", "has_control"]


def items_of(project: Project) -> Items:
    """The items of a label project, read as groups of items alike in every column and in their
    counted votes per label (the item's label_votes, so no vote is read): a few dozen rows
    where there are 100k items, repeated here into one row per item, in the groups' order."""
    if project.is_free_text:
        return _free_text_items(project)
    groups = list(
        ValidationItem.objects.filter(project=project)
        .annotate(has_control=HAS_CONTROL)
        .values_list(*COLUMNS, "label_votes")
        .annotate(n=Count("id"))
        .order_by(*COLUMNS, "label_votes")
    )
    sizes = np.array([group[-1] for group in groups], dtype=np.int64)
    index = {label: j for j, label in enumerate(project.all_labels)}
    votes = np.zeros((len(groups), len(index)), dtype=np.int64)
    for row, group in enumerate(groups):
        for label, n in group[-2].items():
            if label in index:  # a label since removed from the project counts nowhere
                votes[row, index[label]] = n

    def column(j: int) -> np.ndarray:  # text as numpy's own strings: compared in C
        return np.repeat(np.array([group[j] for group in groups], dtype=str), sizes)

    return Items(
        status=column(0),
        majority=column(1),
        split=column(2),
        gold=column(3),
        is_control=np.repeat(np.array([group[4] for group in groups], dtype=bool), sizes),
        votes=np.repeat(votes, sizes, axis=0),
        rows={},
        splits=sorted({group[2] for group in groups}),
    )


def _free_text_items(project: Project) -> Items:
    """One row per item, in id order, with its answers: decoding them is most of the cost."""
    names = ["id", *COLUMNS[:-1], "majority_answers", "gold_answers"]
    items = ValidationItem.objects.filter(project=project).order_by("id")
    rows = [
        dict(zip([*names, "has_control"], row, strict=True))
        for row in items.annotate(has_control=HAS_CONTROL).values_list(*names, "has_control")
    ]

    def column(name: str) -> np.ndarray:
        return np.array([row[name] for row in rows], dtype=str)

    return Items(
        status=column("status"),
        majority=column("majority_label"),
        split=column("split"),
        gold=column("gold_label"),
        is_control=np.array([row["has_control"] for row in rows], dtype=bool),
        votes=np.zeros((len(rows), 0), dtype=np.int64),
        rows={row["id"]: row for row in rows},
        splits=sorted({row["split"] for row in rows}),
    )


def project_stats(project: Project) -> dict[str, Any]:
    with jit_off():
        return _project_stats(project)


def _project_stats(project: Project) -> dict[str, Any]:
    items = items_of(project)
    if project.is_free_text:
        figures = answer_stats(project, items.rows)
    else:
        figures = _label_stats(project, items)
    votes, overall_median = vote_figures(project)
    perturbations, experts, perturbation_seconds = perturbation_figures(project)
    return {
        **figures,
        "items": {s: int(np.count_nonzero(items.status == s)) for s in ItemStatus.values},
        "perturbations": perturbations,
        "human_accuracy": _human_accuracy(items),
        "tags": tag_coverage(project),
        "validators": validator_figures(project, votes),
        "experts": experts,
        "median_seconds": {"perturbation": perturbation_seconds, "vote": overall_median},
    }


def _label_stats(project: Project, items: Items) -> dict[str, Any]:
    """Kappa, alpha, human F1 and the label charts, overall and per split, over the open and
    resolved items with counted votes."""
    votes_per_item = project.setting("votes_per_item")
    categories = project.all_labels
    live = (items.status == ItemStatus.OPEN) | (items.status == ItemStatus.RESOLVED)
    live &= row_sums(items.votes) > 0
    table = items.votes[live]
    resolved = (items.status == ItemStatus.RESOLVED) & (items.majority != "")
    majority = np.full(len(items.majority), -1, dtype=np.int64)
    for j, label in enumerate(categories):
        majority[resolved & (items.majority == label)] = j
    gold = majority[live]
    splits = items.split[live]
    per_split: dict[str, Any] = {}
    for split in items.splits:
        mask = splits == split
        per_split[split] = agreement_figures(
            table[mask], gold[mask], categories, project.labels, votes_per_item
        )
    if len(per_split) == 1:  # one split holds everything: its figures are the overall ones
        overall = next(iter(per_split.values()))
    else:
        overall = agreement_figures(table, gold, categories, project.labels, votes_per_item)
    # Votes for its majority label, per resolved item (0 for one with no counted votes).
    agreeing = table[gold >= 0, gold[gold >= 0]]
    agreeing = np.concatenate([agreeing, np.zeros(int(resolved.sum()) - len(agreeing), int)])
    return {
        **overall,
        "per_split": per_split,
        "label_distribution": {
            "votes": dict(zip(categories, table.sum(axis=0).tolist(), strict=True)),
            "majority": dict(
                zip(
                    categories,
                    np.bincount(majority[majority >= 0], minlength=len(categories)).tolist(),
                    strict=True,
                )
            ),
        },
        "votes_per_item": capped_histogram(row_sums(table), votes_per_item),
        "agreement_histogram": value_histogram(agreeing),
    }


def _human_accuracy(items: Items) -> dict[str, Any]:
    """Share of resolved items whose majority label is the gold label (Gardner et al., Table 3):
    the original's label for controls, the author's intended label for perturbations. In
    free-text projects: whose majority answer matched the gold answers."""
    resolved = items.status == ItemStatus.RESOLVED
    right = items.majority == items.gold
    has_gold = items.gold != ""
    if items.rows:  # free text: the answers must have gold, and match it too
        answers = list(items.rows.values())
        has_gold |= np.array([bool(r["gold_answers"]) for r in answers], dtype=bool)
        right &= np.array([r["majority_answers"] == r["gold_answers"] for r in answers], dtype=bool)
    out = {}
    for kind, is_control in (("controls", True), ("perturbations", False)):
        rows = resolved & (items.is_control == is_control) & has_gold
        n = int(rows.sum())
        accuracy = round(int((rows & right).sum()) / n, 4) if n else None
        out[kind] = {"items": n, "accuracy": accuracy}
    return out


def tag_coverage(project: Project) -> list[dict[str, Any]]:
    """Perturbations per tag (submitted or later, not withdrawn), against the tag's target."""
    live = ~Q(perturbations__status__in=NOT_WRITTEN)
    rows = Tag.objects.filter(project=project).annotate(
        written=Count("perturbations", filter=live),
        accepted=Count("perturbations", filter=Q(perturbations__status=Status.ACCEPTED)),
    )
    return [
        {
            "tag": tag.name,
            "description": tag.description,
            "target": tag.target,
            "written": tag.written,
            "accepted": tag.accepted,
            "share": round(min(1.0, tag.written / tag.target), 4) if tag.target else None,
        }
        for tag in rows
    ]


# validator id -> (votes, median seconds per vote)
VoteFigures = dict[int, tuple[int, float | None]]


def vote_figures(project: Project) -> tuple[VoteFigures, float | None]:
    """Each validator's number of votes and median seconds per vote, and the median of all
    votes, from the votes per validator and seconds that the database keeps (VoteSeconds)."""
    rows = VoteSeconds.objects.filter(project=project, votes__gt=0).values_list(
        "validator_id", "seconds", "votes"
    )
    per: dict[int, Counter[int]] = defaultdict(Counter)
    overall: Counter[int] = Counter()
    for validator_id, seconds, n in rows:
        per[validator_id][seconds] += n
        overall[seconds] += n
    figures = {v: (sum(h.values()), histogram_median(h)) for v, h in per.items()}
    return figures, histogram_median(overall)


def validator_figures(project: Project, votes: VoteFigures | None = None) -> list[dict[str, Any]]:
    votes = vote_figures(project)[0] if votes is None else votes
    # Agreement comes from the running counts that quality checks use: one source of truth.
    statuses = {
        s.validator_id: s for s in ValidatorStatus.objects.filter(project=project).order_by()
    }
    # Validators the crowd gates met before any vote (a test failed, say) are listed too.
    gated = [v for v, s in statuses.items() if v not in votes and (s.quiz_attempt or s.gold_seen)]
    ids = [*votes, *gated]
    names = dict(get_user_model().objects.filter(pk__in=ids).values_list("id", "username"))
    figures = []
    for validator_id in sorted(ids, key=names.__getitem__):
        status = statuses.get(validator_id) or ValidatorStatus(project=project)
        n, median_seconds = votes.get(validator_id, (0, None))
        figures.append(
            {
                "id": validator_id,
                "validator": names[validator_id],
                "votes": n,
                "resolved_votes": status.resolved_votes,
                "agreement": agreement_of(status),
                "qualified": status.qualified,
                "median_seconds": median_seconds,
                **gate_figures(project, status),
            }
        )
    return figures


def perturbation_figures(
    project: Project,
) -> tuple[dict[str, int], list[dict[str, Any]], float | None]:
    """Perturbations per status; per author (withdrawn ones left out; controls are originals,
    not perturbations, so they never count here); and the median seconds of those submitted:
    one grouped read of the perturbations."""
    rows = (
        project.perturbations.values_list("author__username", "status", "seconds_spent")
        .annotate(n=Count("id"))
        .order_by()
    )
    statuses: Counter[str] = Counter()
    authors: dict[str, Counter[str]] = defaultdict(Counter)
    seconds: Counter[int] = Counter()
    for author, status, spent, n in rows:
        statuses[status] += n
        if status != Status.WITHDRAWN:
            authors[author][status] += n
        if status not in NOT_WRITTEN and spent:  # 0 s: no time recorded (imported)
            seconds[spent] += n
    experts = []
    for author in sorted(authors):
        counts = authors[author]
        resolved = sum(counts[status] for status in Perturbation.RESOLVED)
        experts.append(
            {
                "expert": author,
                "submitted": counts.total() - counts[Status.DRAFT],
                "drafts": counts[Status.DRAFT],
                "accepted": counts[Status.ACCEPTED],
                "acceptance": round(counts[Status.ACCEPTED] / resolved, 4) if resolved else None,
            }
        )
    return dict(statuses), experts, histogram_median(seconds)
