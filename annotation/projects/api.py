"""Projects and members over the API (docs/api.md)."""

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.crowd import gates
from annotation.data.api import project_delete_answer
from annotation.errors import DomainError
from annotation.pagination import page_of, paginated
from annotation.permissions import (
    Role,
    check_may_create_projects,
    project_for,
    roles_of,
    visible_projects,
)
from annotation.projects import services
from annotation.projects.serializers import (
    MemberInputSerializer,
    MemberOutputSerializer,
    ProjectInputSerializer,
    ProjectOutputSerializer,
    ProjectUpdateSerializer,
)
from annotation.text.parsing import json_only


class ProjectListView(generics.ListCreateAPIView):
    serializer_class = ProjectOutputSerializer
    parser_classes = json_only()  # a configuration is nested JSON, which a form cannot carry

    def get_queryset(self):  # type: ignore[no-untyped-def]
        return visible_projects(self.request.user).prefetch_related("tags", "guidelines")

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        for project in page or []:
            project.user_roles = roles_of(request.user, project)  # type: ignore[attr-defined]
        return self.get_paginated_response(ProjectOutputSerializer(page, many=True).data)

    @extend_schema(request=ProjectInputSerializer, responses={201: ProjectOutputSerializer})
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        check_may_create_projects(request.user)
        data = ProjectInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        project = services.project_create(user=request.user, **data.validated_data)
        project.user_roles = roles_of(request.user, project)  # type: ignore[attr-defined]
        return Response(ProjectOutputSerializer(project).data, status=status.HTTP_201_CREATED)


class ProjectDetailView(APIView):
    parser_classes = json_only()

    @extend_schema(responses=ProjectOutputSerializer)
    def get(self, request: Request, slug: str) -> Response:
        return Response(ProjectOutputSerializer(project_for(request.user, slug)).data)

    @extend_schema(request=ProjectUpdateSerializer, responses=ProjectOutputSerializer)
    def patch(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        data = ProjectUpdateSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        if request.data.get("slug", slug) != slug:  # type: ignore[union-attr]  # a dict: valid
            raise DomainError("the slug cannot change.", field="slug")
        project = services.project_update(project=project, user=request.user, **data.validated_data)
        gates.pool_for_gates(project)  # a gate on: the gold pool filled now (docs/validation.md)
        return Response(ProjectOutputSerializer(project).data)

    @extend_schema(
        parameters=[OpenApiParameter("confirm", str, required=True, description="the slug")],
        responses={204: None},
    )
    def delete(self, request: Request, slug: str) -> Response:
        """Delete the project and everything in it; 409 while it has published releases."""
        return project_delete_answer(request, slug)


class MemberView(APIView):
    @extend_schema(operation_id="projects_members_list", responses=page_of(MemberOutputSerializer))
    def get(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        members = services.members_of(project, request.user)
        return paginated(request, self, members, MemberOutputSerializer)

    # JSON: a form cannot carry an empty list of roles (a form with roles is still read).
    @extend_schema(
        request={"application/json": MemberInputSerializer}, responses=MemberOutputSerializer
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        data = MemberInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.member_set_roles(project=project, actor=request.user, **data.validated_data)
        username = data.validated_data["username"]
        members = services.members_of(project, request.user)
        member = next((m for m in members if m["username"] == username), None)
        return Response(MemberOutputSerializer(member or {"username": username, "roles": []}).data)
