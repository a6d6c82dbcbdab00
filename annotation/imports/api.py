"""Imports over the API (docs/workflows.md, docs/formats.md): originals, existing sets and votes."""

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.imports.background import files_and_options, import_or_queue, job_answer
from annotation.imports.serializers import (
    ImportInputSerializer,
    ImportResultSerializer,
    SetImportSerializer,
    VoteImportInputSerializer,
)
from annotation.models import ImportJob
from annotation.permissions import Role, project_for

QUEUED = OpenApiResponse(
    description="A large upload (over IMPORT_BACKGROUND_BYTES), queued: the import job, whose "
    "status GET /api/projects/{slug}/imports/{job}/ follows."
)
REFUSED = OpenApiResponse(
    description='A rejected file: {"errors": [{"line": n, "message": "..."}]}, every problem '
    "with its line (null for the whole file); or field errors for a bad form."
)


def _import(
    request: Request, project: Any, kind: str, files: dict[str, Any], options: dict[str, Any]
) -> Response:
    """Import in the request, or queue it when the upload is large (201, or 202 with the job)."""
    job, answer = import_or_queue(
        project=project, user=request.user, kind=kind, files=files, options=options
    )
    if job is not None:
        return Response(job_answer(job), status=status.HTTP_202_ACCEPTED)
    created = answer.get("imported", answer.get("perturbations"))
    return Response(answer, status=status.HTTP_200_OK if created == 0 else status.HTTP_201_CREATED)


class ExampleImportView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": ImportInputSerializer},
        responses={201: ImportResultSerializer, 202: QUEUED, 400: REFUSED},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        data = ImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        options = {"fmt": values.get("format"), "mapping": values["mapping"],
                   "default_split": values["split"], "labels": values["labels"],
                   "skip_bad": values["skip_bad"]}  # fmt: skip
        return _import(
            request, project, ImportJob.Kind.ORIGINALS, {"file": values["file"]}, options
        )


class SetImportView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": SetImportSerializer},
        responses={201: dict, 202: QUEUED, 400: REFUSED},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        data = SetImportSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        files, options = files_and_options(data.validated_data)
        return _import(request, project, ImportJob.Kind.SETS, files, options)


class VoteImportView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": VoteImportInputSerializer},
        responses={201: dict, 202: QUEUED, 400: REFUSED},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        data = VoteImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        files = {"file": data.validated_data["file"]}
        return _import(request, project, ImportJob.Kind.VOTES, files, {})


class ImportJobView(APIView):
    @extend_schema(responses={200: dict})
    def get(self, request: Request, slug: str, pk: int) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        return Response(job_answer(get_object_or_404(ImportJob, project=project, pk=pk)))
