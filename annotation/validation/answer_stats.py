"""Agreement statistics of free-text projects (docs/task-types.md): the share of items with a
majority, and the mean pairwise F1 between validators' responses. They take the place of
kappa, alpha and human F1, which need a fixed set of labels."""

from collections import defaultdict
from collections.abc import Mapping
from itertools import combinations
from typing import Any

from annotation.models import Project, ValidationItem, Vote
from annotation.text.answers import AnswerRules, Response
from annotation.validation.agreement import capped_histogram, value_histogram

ANSWER = "(an answer)"  # how typed answers are counted beside extra labels


def answer_block(
    responses: dict[int, list[Response]],
    outcomes: dict[int, bool],
    votes_per_item: int,
    rules: AnswerRules,
) -> dict[str, Any]:
    """Figures over items given as item -> responses; `outcomes` maps each resolved item to
    whether it had a majority."""
    pairs = [pair for item in responses.values() for pair in combinations(item, 2)]
    scores = [rules.pairwise(a, b) for a, b in pairs]
    resolved = len(outcomes)
    return {
        "items": sum(1 for item in responses.values() if len(item) == votes_per_item),
        "fleiss_kappa": None,
        "krippendorff_alpha": None,
        "human_f1": {"macro": None, "per_label": {}},
        "majority_share": round(sum(outcomes.values()) / resolved, 4) if resolved else None,
        "mean_pairwise_f1": round(sum(scores) / len(scores), 4) if scores else None,
        "pairs": len(scores),
    }


def responses_of(project: Project, **filters: Any) -> dict[int, list[Response]]:
    """item id -> the counted responses on it."""
    out: dict[int, list[Response]] = defaultdict(list)
    rows = Vote.objects.filter(item__project=project, counts=True, **filters)
    for item_id, answer, label in rows.values_list("item_id", "answer", "label").order_by("id"):
        out[item_id].append(Response(answer, label))
    return out


def answer_stats(project: Project, info: Mapping[int, Any]) -> dict[str, Any]:
    """The free-text counterpart of the label figures of annotation.validation.stats."""
    votes_per_item = project.setting("votes_per_item")
    rules = AnswerRules.of(project)
    responses = responses_of(
        project, item__status__in=[ValidationItem.Status.OPEN, ValidationItem.Status.RESOLVED]
    )
    resolved = {i: r for i, r in info.items() if r["status"] == ValidationItem.Status.RESOLVED}
    outcomes = {i: bool(r["majority_answers"] or r["majority_label"]) for i, r in resolved.items()}
    splits = sorted({row["split"] for row in info.values()})
    per_split = {
        split: answer_block(
            {i: rs for i, rs in responses.items() if info[i]["split"] == split},
            {i: o for i, o in outcomes.items() if info[i]["split"] == split},
            votes_per_item,
            rules,
        )
        for split in splits
    }
    # One split holds everything: its figures are the overall ones.
    overall = (
        per_split[splits[0]]
        if len(splits) == 1
        else answer_block(responses, outcomes, votes_per_item, rules)
    )
    return {
        **overall,
        "per_split": per_split,
        **_distributions(project, rules, responses, resolved),
        "votes_per_item": capped_histogram((len(rs) for rs in responses.values()), votes_per_item),
    }


def _distributions(
    project: Project,
    rules: AnswerRules,
    responses: dict[int, list[Response]],
    resolved: dict[int, Any],
) -> dict[str, Any]:
    """Votes and majorities by kind (an answer, or each extra label), and how many responses
    agreed with each resolved item's majority."""
    votes = dict.fromkeys([ANSWER, *project.extra_labels], 0)
    for item in responses.values():
        for response in item:
            votes[response.label or ANSWER] += 1
    majority = dict.fromkeys([ANSWER, *project.extra_labels], 0)
    agreeing = []
    for i, row in resolved.items():
        if row["majority_answers"] or row["majority_label"]:
            majority[row["majority_label"] or ANSWER] += 1
        agreeing.append(
            sum(
                rules.matches(r, row["majority_answers"], row["majority_label"])
                for r in responses.get(i, [])
            )
        )
    return {
        "label_distribution": {"votes": votes, "majority": majority},
        "agreement_histogram": value_histogram(agreeing),
    }
