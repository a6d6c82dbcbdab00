"""Releases over the API (docs/workflows.md, docs/api.md)."""

from pathlib import Path

from django.conf import settings
from django.http import FileResponse, Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.errors import DomainError
from annotation.pagination import page_of, paginated
from annotation.permissions import Role, admin_release, project_for
from annotation.releases.diff import release_diff
from annotation.releases.serializers import (
    ReleaseDiffSerializer,
    ReleaseInputSerializer,
    ReleaseOutputSerializer,
)
from annotation.releases.services import release_create
from annotation.text.parsing import parse_id

AN_ID = {"type": "integer", "minimum": 1, "maximum": 10**18 - 1}  # what parse_id reads


class ReleaseListView(APIView):
    @extend_schema(
        operation_id="projects_releases_list", responses=page_of(ReleaseOutputSerializer)
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        releases = project.releases.select_related("project", "created_by")
        return paginated(request, self, releases, ReleaseOutputSerializer)

    # JSON: `proportions` and `min_agreement` are objects, which a form cannot carry (a form
    # with the flat fields alone is still read, as scripts send it).
    @extend_schema(
        request={"application/json": ReleaseInputSerializer},
        responses={201: ReleaseOutputSerializer},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        data = ReleaseInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        release = release_create(project=project, user=request.user, **data.validated_data)
        return Response(ReleaseOutputSerializer(release).data, status=status.HTTP_201_CREATED)


class ReleaseDetailView(APIView):
    @extend_schema(responses=ReleaseOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(ReleaseOutputSerializer(admin_release(request.user, pk)).data)


class ReleaseDownloadView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["zip"])],
        responses={(200, "application/zip"): bytes},
    )
    def get(self, request: Request, pk: int) -> FileResponse:
        release = admin_release(request.user, pk)
        if request.query_params.get("format", "zip") != "zip":
            raise DomainError("format is zip.", field="format")
        path = Path(settings.MEDIA_ROOT) / release.bundle if release.bundle else None
        if path is None or not path.exists():
            raise Http404("The bundle file is missing.")
        name = f"{release.project.slug}-{release.version}.zip"
        return FileResponse(path.open("rb"), as_attachment=True, filename=name)


class ReleaseDiffView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("against", AN_ID, required=True, description="a release id")],
        responses=ReleaseDiffSerializer,
    )
    def get(self, request: Request, pk: int) -> Response:
        release = admin_release(request.user, pk)
        against = parse_id(request.query_params.get("against"))
        if against is None:
            raise DomainError("against must be a release id.", field="against")
        diff = release_diff(admin_release(request.user, against), release)
        return Response(ReleaseDiffSerializer(diff).data)
