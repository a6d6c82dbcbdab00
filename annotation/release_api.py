"""Releases and set import over the API (SPEC §3E, §6)."""

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api import as_drf_error
from annotation.importers import ImportRejected
from annotation.models import Release
from annotation.permissions import Role, project_for, roles_of
from annotation.releases import release_create, release_diff
from annotation.serializers import ImportErrorsSerializer
from annotation.set_import import import_sets, parse_paired_tsv, parse_sets_jsonl


class ReleaseInputSerializer(serializers.Serializer):
    version = serializers.CharField(max_length=32)
    split_strategy = serializers.ChoiceField(choices=["pivot", "random"], default="pivot")
    seed = serializers.IntegerField(default=0)
    proportions = serializers.DictField(child=serializers.FloatField(), required=False)
    min_agreement = serializers.DictField(child=serializers.IntegerField(), required=False)


class ReleaseOutputSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.slug")
    created_by = serializers.CharField(source="created_by.username", default=None)
    download = serializers.SerializerMethodField()

    class Meta:
        model = Release
        fields = [
            "id", "project", "version", "created_by", "created_at", "options", "counts",
            "statistics", "manifest", "sha256", "download",
        ]  # fmt: skip

    def get_download(self, release: Release) -> str:
        return f"/api/releases/{release.pk}/download/?format=zip"


def release_for(user: Any, pk: int) -> Release:
    """A release, for admins of its project; 404 for everyone else."""
    release = get_object_or_404(Release.objects.select_related("project", "created_by"), pk=pk)
    if Role.ADMIN not in roles_of(user, release.project):
        raise Http404("No such release.")
    return release


class ReleaseListView(APIView):
    @extend_schema(responses=ReleaseOutputSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        releases = project.releases.select_related("project", "created_by")
        return Response(ReleaseOutputSerializer(releases, many=True).data)

    @extend_schema(request=ReleaseInputSerializer, responses={201: ReleaseOutputSerializer})
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        data = ReleaseInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            release = release_create(project=project, user=request.user, **data.validated_data)
        except DjangoValidationError as error:
            raise as_drf_error(error) from None
        return Response(ReleaseOutputSerializer(release).data, status=status.HTTP_201_CREATED)


class ReleaseDetailView(APIView):
    @extend_schema(responses=ReleaseOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(ReleaseOutputSerializer(release_for(request.user, pk)).data)


class ReleaseDownloadView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["zip"])],
        responses={(200, "application/zip"): bytes},
    )
    def get(self, request: Request, pk: int) -> FileResponse:
        release = release_for(request.user, pk)
        path = Path(settings.MEDIA_ROOT) / release.bundle if release.bundle else None
        if path is None or not path.exists():
            raise Http404("The bundle file is missing.")
        name = f"{release.project.slug}-{release.version}.zip"
        return FileResponse(path.open("rb"), as_attachment=True, filename=name)


class ReleaseDiffView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("against", int, required=True)], responses={200: dict}
    )
    def get(self, request: Request, pk: int) -> Response:
        release = release_for(request.user, pk)
        try:
            other = release_for(request.user, int(request.query_params.get("against", "")))
        except ValueError:
            return Response({"detail": "against must be a release id."}, status=400)
        if other.project_id != release.project_id:
            return Response({"detail": "Both releases must belong to one project."}, status=400)
        return Response(release_diff(other, release))


class SetImportSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=["sets_jsonl", "paired_tsv"])
    file = serializers.FileField(required=False)
    original = serializers.FileField(required=False)
    contrast = serializers.FileField(required=False)
    accept = serializers.BooleanField(default=False)
    author = serializers.RegexField(r"^[\w.-]{1,60}$", default="imported")
    mapping = serializers.JSONField(required=False, default=dict)
    split = serializers.ChoiceField(choices=["train", "dev", "test"], default="test")
    tags = serializers.ListField(child=serializers.CharField(), required=False, default=list)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        needed = ["file"] if attrs["format"] == "sets_jsonl" else ["original", "contrast"]
        missing = [name for name in needed if not attrs.get(name)]
        if missing:
            raise serializers.ValidationError({name: "This file is required." for name in missing})
        return attrs


def run_set_import(project: Any, user: Any, values: dict[str, Any]) -> int:
    """Parse and import sets from validated form values; raises ImportRejected."""
    if values["format"] == "sets_jsonl":
        upload = values["file"]
        sets = parse_sets_jsonl(project, upload.read(), values["tags"])
    else:
        upload = values["original"]
        sets = parse_paired_tsv(
            project,
            upload.read(),
            values["contrast"].read(),
            mapping=values["mapping"] or {},
            split=values["split"],
            source_name=upload.name,
            tags=values["tags"],
        )
    return import_sets(
        project=project,
        user=user,
        sets=sets,
        source_name=upload.name,
        author=values["author"],
        accept=values["accept"],
    )


class SetImportView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": SetImportSerializer},
        responses={201: dict, 400: ImportErrorsSerializer},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        data = SetImportSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            n = run_set_import(project, request.user, data.validated_data)
        except ImportRejected as rejected:
            return Response(rejected.as_dict(), status=status.HTTP_400_BAD_REQUEST)
        return Response({"perturbations": n}, status=status.HTTP_201_CREATED)
