"""Authoring API: pivots, claims, sampling and perturbations (docs/workflows.md, docs/api.md)."""

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.authoring import selectors
from annotation.authoring.serializers import (
    ClaimOutputSerializer,
    PerturbationCreateSerializer,
    PerturbationInputSerializer,
    PerturbationOutputSerializer,
    PivotSerializer,
    SampleInputSerializer,
)
from annotation.authoring.services import claims, drafts
from annotation.errors import DomainError
from annotation.models import Example
from annotation.models.config import SPLITS
from annotation.pagination import page_of, paginated
from annotation.permissions import Role, project_for

AUTHORS = (Role.EXPERT, Role.ADMIN)


class PivotListView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("split", str, enum=list(SPLITS), default="test"),
            OpenApiParameter("label", str),
            OpenApiParameter("unused", bool),
            OpenApiParameter("search", str),
            OpenApiParameter("page", int),
        ],
        responses=page_of(PivotSerializer),
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, *AUTHORS)
        params = request.query_params
        split = params.get("split", "test")
        if split not in SPLITS:
            raise DomainError(f"split is one of {', '.join(SPLITS)}.", field="split")
        unused = params.get("unused", "").lower()
        if unused not in {"", "0", "1", "false", "true", "no", "yes"}:
            raise DomainError("unused is true or false.", field="unused")
        qs = selectors.pivots(
            project,
            split=split,
            label=params.get("label", ""),
            unused=unused in {"1", "true", "yes"},
            search=params.get("search", "").strip(),
        )
        return paginated(request, self, qs, PivotSerializer, {"request": request})


class ClaimView(APIView):
    @extend_schema(request=None, responses={200: ClaimOutputSerializer})
    def post(self, request: Request, slug: str, external_id: str) -> Response:
        project = project_for(request.user, slug, *AUTHORS)
        pivot = get_object_or_404(Example, project=project, external_id=external_id)
        claim = claims.pivot_claim(pivot=pivot, expert=request.user)
        return Response(ClaimOutputSerializer(claim).data)


class SampleView(APIView):
    @extend_schema(request=SampleInputSerializer, responses={200: ClaimOutputSerializer})
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, *AUTHORS)
        data = SampleInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        claim = claims.pivot_sample(project=project, expert=request.user, **data.validated_data)
        return Response(ClaimOutputSerializer(claim).data)


class PerturbationListView(APIView):
    @extend_schema(
        operation_id="projects_perturbations_list",
        responses=page_of(PerturbationOutputSerializer),
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, *AUTHORS)
        qs = selectors.perturbations_visible_to(project, request.user, project.user_roles)  # type: ignore[attr-defined]
        if request.query_params.get("status"):
            qs = qs.filter(status=request.query_params["status"])
        return paginated(request, self, qs, PerturbationOutputSerializer)

    @extend_schema(
        request=PerturbationCreateSerializer, responses={201: PerturbationOutputSerializer}
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, *AUTHORS)
        data = PerturbationCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        pivot = Example.objects.filter(project=project, external_id=values["pivot"]).first()
        if pivot is None:
            raise ValidationError({"pivot": [f"No original with id {values['pivot']!r}."]})
        perturbation = drafts.perturbation_save(
            author=request.user, pivot=pivot, **_content(values)
        )
        return Response(
            PerturbationOutputSerializer(perturbation).data, status=status.HTTP_201_CREATED
        )


def _content(values: dict[str, Any]) -> dict[str, Any]:
    keys = ("fields", "label", "answers", "tags", "rationale", "seconds_spent", "submit")
    return {key: values[key] for key in keys if key in values}


class PerturbationDetailView(APIView):
    def _get(self, request: Request, slug: str, pk: int) -> Any:
        project = project_for(request.user, slug, *AUTHORS)
        qs = selectors.perturbations_visible_to(project, request.user, project.user_roles)  # type: ignore[attr-defined]
        return project, get_object_or_404(qs, pk=pk)

    @extend_schema(responses=PerturbationOutputSerializer)
    def get(self, request: Request, slug: str, pk: int) -> Response:
        _, perturbation = self._get(request, slug, pk)
        return Response(PerturbationOutputSerializer(perturbation).data)

    @extend_schema(request=PerturbationInputSerializer, responses=PerturbationOutputSerializer)
    def patch(self, request: Request, slug: str, pk: int) -> Response:
        project, perturbation = self._get(request, slug, pk)
        data = PerturbationInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        is_admin = Role.ADMIN in project.user_roles
        if "allow_large_edit" in values:
            if not is_admin:
                raise DomainError("Only admins can allow large edits.", code="forbidden")
            drafts.allow_large_edit(
                perturbation=perturbation, admin=request.user, allow=values["allow_large_edit"]
            )
        if values.get("status") == "withdrawn":
            perturbation = drafts.perturbation_withdraw(
                perturbation=perturbation, user=request.user
            )
        elif _content(values):
            if perturbation.author_id != request.user.pk:
                raise DomainError("Only the author can edit a draft.", code="forbidden")
            perturbation = drafts.perturbation_save(
                author=request.user, perturbation=perturbation, **_content(values)
            )
        perturbation.refresh_from_db()
        return Response(PerturbationOutputSerializer(perturbation).data)
