"""Imports over the API (docs/workflows.md, docs/formats.md): originals, existing sets and votes."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.imports.originals import import_examples
from annotation.imports.serializers import (
    ImportInputSerializer,
    ImportResultSerializer,
    SetImportSerializer,
    VoteImportInputSerializer,
)
from annotation.imports.sets import run_set_import
from annotation.imports.votes import import_votes
from annotation.permissions import Role, project_for

REFUSED = OpenApiResponse(
    description='A rejected file: {"errors": [{"line": n, "message": "..."}]}, every problem '
    "with its line (null for the whole file); or field errors for a bad form."
)


class ExampleImportView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": ImportInputSerializer},
        responses={201: ImportResultSerializer, 400: REFUSED},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        data = ImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        mapping = data.validated_data["mapping"]
        batch = import_examples(
            project=project,
            user=request.user,
            data=upload.read(),
            source_name=upload.name,
            fmt=data.validated_data.get("format"),
            mapping=mapping,
            default_split=data.validated_data["split"],
            labels=data.validated_data["labels"],
        )
        return Response(
            {"batch": batch.pk, "imported": batch.row_count}, status=status.HTTP_201_CREATED
        )


class SetImportView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": SetImportSerializer},
        responses={201: dict, 400: REFUSED},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        data = SetImportSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = run_set_import(project, request.user, data.validated_data)
        return Response(
            {
                "perturbations": result.created,
                "already_present": result.skipped,
                "warnings": [w.as_dict() for w in result.warnings],
            },
            status=status.HTTP_201_CREATED,
        )


class VoteImportView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": VoteImportInputSerializer},
        responses={201: dict, 400: REFUSED},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        data = VoteImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        n = import_votes(
            project=project, user=request.user, data=upload.read(), source_name=upload.name
        )
        return Response({"imported": n}, status=status.HTTP_201_CREATED)
