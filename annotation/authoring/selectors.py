"""Reads of authoring: the pages' and API's lists, and the live perturbations and free pivots that
its services count."""

from typing import Any

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from annotation.models import Claim, Example, Perturbation, Project


def pivots(
    project: Project,
    *,
    split: str = "test",
    label: str = "",
    unused: bool = False,
    search: str = "",
) -> QuerySet[Example]:
    live_claim = Claim.objects.filter(example=OuterRef("pk"), expires_at__gt=timezone.now())
    qs = (
        project.examples.filter(split=split)
        .annotate(
            n_perturbations=Count(
                "perturbations", filter=~Q(perturbations__status=Perturbation.Status.WITHDRAWN)
            ),
            live_claim_expert_id=Subquery(live_claim.values("expert_id")[:1]),
        )
        .order_by("id")
    )
    if label:
        qs = qs.filter(label=label)
    if unused:
        qs = qs.filter(n_perturbations=0)
    if search:
        matches = Q()
        for name in project.field_names:
            matches |= Q(**{f"fields__{name}__icontains": search})
        qs = qs.filter(matches | Q(external_id=search))
    return qs


def perturbations_visible_to(
    project: Project, user: Any, roles: set[str]
) -> QuerySet[Perturbation]:
    """Admins see every perturbation; anyone else only their own."""
    qs = project.perturbations.select_related("pivot").prefetch_related("tags")
    if "admin" in roles:
        return qs
    return qs.filter(author=user)


def live_perturbations(pivot: Example) -> Any:
    return pivot.perturbations.exclude(status=Perturbation.Status.WITHDRAWN)


def unclaimed_pivots(project: Project, split: str = "test") -> Any:
    now = timezone.now()
    cap = project.setting("max_perturbations_per_pivot")
    return (
        project.examples.filter(split=split)
        .exclude(claim__expires_at__gt=now)
        .annotate(
            n=Count("perturbations", filter=~Q(perturbations__status=Perturbation.Status.WITHDRAWN))
        )
        .filter(n__lt=cap)
    )
