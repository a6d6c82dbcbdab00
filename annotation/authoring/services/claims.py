"""Pivot claims (docs/workflows.md): an expert reserves a pivot for claim_ttl before editing it."""

import random
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Count, Min
from django.utils import timezone

from annotation.authoring.selectors import live_perturbations, unclaimed_pivots
from annotation.errors import DomainError
from annotation.models import AuditLog, Claim, Example, Perturbation, Project
from annotation.text.answers import AnswerRules, clean_answers

Status = Perturbation.Status


@transaction.atomic
def pivot_claim(*, pivot: Example, expert: Any) -> Claim:
    """Reserve `pivot` for `expert` for the project's claim_ttl, or refuse if someone holds it."""
    # Lock the pivot row: two experts claiming at once are serialised here.
    pivot = Example.objects.select_for_update().get(pk=pivot.pk)
    project = pivot.project
    cap = project.setting("max_perturbations_per_pivot")
    if live_perturbations(pivot).exclude(author=expert).count() >= cap:
        raise DomainError(
            f"This pivot already has {cap} perturbations (the limit).", code="conflict"
        )
    now = timezone.now()
    claim = Claim.objects.filter(example=pivot).first()
    if claim and claim.is_live(now) and claim.expert_id != expert.pk:
        raise DomainError(
            "Another expert holds this pivot until "
            f"{timezone.localtime(claim.expires_at):%H:%M} UTC.",
            code="conflict",
        )
    expires = now + timedelta(seconds=project.setting("claim_ttl"))
    claim, _ = Claim.objects.update_or_create(
        example=pivot, defaults={"expert": expert, "opened_at": now, "expires_at": expires}
    )
    return claim


def pivot_sample(*, project: Project, expert: Any, split: str, strategy: str) -> Claim:
    """Claim an unclaimed pivot: at random, or from the label with the fewest perturbations.
    Unused pivots first; when every pivot has a perturbation (a project made from a published
    set), one of those with the fewest, for another perturbation under the project's cap."""
    pool = unclaimed_pivots(project, split)
    candidates = pool.filter(n=0)
    if not candidates.exists():
        fewest = pool.aggregate(m=Min("n"))["m"]
        if fewest is None:
            raise DomainError(
                f"No pivot of the {split} split has room for a perturbation: each has "
                f"{project.setting('max_perturbations_per_pivot')}, the most per pivot, or "
                "is claimed now. An admin may import more originals or raise the most "
                "perturbations per pivot in Settings.",
                code="conflict",
            )
        candidates = pool.filter(n=fewest)
    if strategy == "balanced":
        counts = dict(
            project.perturbations.exclude(status=Status.WITHDRAWN)
            .filter(pivot__split=split)
            .values_list("pivot__label")
            .annotate(n=Count("id"))
        )
        available = set(candidates.values_list("label", flat=True).distinct())
        if available:
            label = min(sorted(available), key=lambda lab: counts.get(lab, 0))
            candidates = candidates.filter(label=label)
    elif strategy != "random":
        raise DomainError(f"Unknown sampling strategy {strategy!r}; use random or balanced.")
    ids = list(candidates.values_list("id", flat=True)[:500])
    random.shuffle(ids)
    for pk in ids:
        try:
            return pivot_claim(pivot=Example.objects.get(pk=pk), expert=expert)
        except DomainError:
            continue  # someone claimed it meanwhile
    raise DomainError(f"No unclaimed, unused pivot is left in the {split} split.", code="conflict")


@transaction.atomic
def pivot_answer_write(*, pivot: Example, expert: Any, answers: Any) -> Example:
    """Write the answer of an original that waits for one (a published DROP set imported
    without DROP's test set), once, under the project's answer rules; the expert must hold
    the pivot."""
    pivot = Example.objects.select_for_update().select_related("project").get(pk=pivot.pk)
    project = pivot.project
    if not project.is_free_text or not pivot.waits_for_answer:
        raise DomainError("This original already has its answer.", code="conflict")
    claim = Claim.objects.filter(example=pivot, expert=expert).first()
    if claim is None or not claim.is_live():
        raise DomainError("Claim this pivot before you write its answer.", code="conflict")
    cleaned = clean_answers(answers, AnswerRules.of(project))
    if isinstance(cleaned, str):
        raise DomainError(cleaned, field="answers")
    pivot.answers = cleaned
    pivot.save(update_fields=["answers"])
    AuditLog.record(
        actor=expert,
        action="original_answer_written",
        project=project,
        example=pivot.external_id,
        answers=cleaned,
    )
    return pivot
