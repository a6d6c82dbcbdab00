"""A release's statistics (its card's figures): agreement per split over the released
perturbations, the annotators' time, and the pseudonyms that name them publicly."""

import statistics
from collections import Counter
from typing import Any

from django.db.models import Count, Max

from annotation.models import Project, Pseudonym, Release, ReleaseEntry, Vote
from annotation.releases import bundle
from annotation.validation.agreement import histogram_median
from annotation.validation.answer_stats import answer_block, responses_of
from annotation.validation.answers import AnswerRules
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
    project: Project, release: Release, chosen: list[bundle.Chosen], seconds: list[int]
) -> dict[str, Any]:
    """Agreement per split over the released perturbations, and the annotators' time.
    Names the validators with pseudonyms, creating those not named yet."""
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
    # Who voted, and how long each vote took, from one small histogram query over the votes on
    # the items of the release's perturbations.
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
        "median_seconds_per_perturbation": _median([s for s in seconds if s > 0]),
        "total_hours_authoring": round(sum(seconds) / 3600, 2),
        "median_seconds_per_vote": histogram_median(vote_seconds),
    }


def _answer_agreement(project: Project, members: list[bundle.Chosen]) -> dict[str, Any]:
    responses = responses_of(
        project, item__perturbation_id__in=[c.perturbation_id for c in members]
    )
    return answer_block(
        responses,
        dict.fromkeys(responses, True),
        project.setting("votes_per_item"),
        AnswerRules.of(project),
    )


def _median(values: list[int]) -> float | None:
    return float(statistics.median(values)) if values else None
