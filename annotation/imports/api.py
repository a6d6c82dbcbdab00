"""Imports over the API (docs/workflows.md, docs/formats.md): originals, existing sets and votes."""

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from annotation.imports.background import (
    JOB_ACTIONS,
    files_and_options,
    import_or_queue,
)
from annotation.imports.published.services import PUBLISHED_FILES
from annotation.imports.serializers import (
    ImportInputSerializer,
    ImportJobSerializer,
    ImportResultSerializer,
    MovedSerializer,
    NewProjectPublishedImportSerializer,
    NewProjectSlugSerializer,
    PublishedImportSerializer,
    PublishedResultSerializer,
    SetImportSerializer,
    SetsResultSerializer,
    VoteImportInputSerializer,
    VotesResultSerializer,
)
from annotation.imports.services.running import import_now
from annotation.jobs.api import JobActionView
from annotation.models import ImportJob, Project
from annotation.permissions import (
    Role,
    check_may_create_projects,
    may_create_projects,
    project_for,
)

# What an import in the request answers, by kind (a job's `result` once it succeeded).
RESULTS: dict[str, type[Serializer]] = {
    ImportJob.Kind.ORIGINALS: ImportResultSerializer,
    ImportJob.Kind.SETS: SetsResultSerializer,
    ImportJob.Kind.VOTES: VotesResultSerializer,
    ImportJob.Kind.PUBLISHED: PublishedResultSerializer,
}
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
        return Response(ImportJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)
    created = answer.get("imported", answer.get("perturbations"))
    shown = RESULTS[kind](answer).data
    return Response(shown, status=status.HTTP_200_OK if created == 0 else status.HTTP_201_CREATED)


class ExampleImportView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": ImportInputSerializer},
        responses={201: ImportResultSerializer, 202: ImportJobSerializer, 400: REFUSED},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        data = ImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        options = {
            "fmt": values.get("format"),
            "mapping": values["mapping"],
            "default_split": values["split"],
            "labels": values["labels"],
            "skip_bad": values["skip_bad"],
        }
        return _import(
            request, project, ImportJob.Kind.ORIGINALS, {"file": values["file"]}, options
        )


class SetImportView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": SetImportSerializer},
        responses={201: SetsResultSerializer, 202: ImportJobSerializer, 400: REFUSED},
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
        responses={201: VotesResultSerializer, 202: ImportJobSerializer, 400: REFUSED},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        data = VoteImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        files = {"file": data.validated_data["file"]}
        return _import(request, project, ImportJob.Kind.VOTES, files, {})


def moved(location: str, what: str) -> Response:
    """An old route's answer for one release (docs/api.md, "Old routes"): 308, which a client
    follows with the same method and body, to where `what` lives now."""
    detail = f"{what} moved to {location}; this route goes with the next release."
    response = Response(MovedSerializer({"detail": detail, "location": location}).data, 308)
    response["Location"] = location
    return response


MOVED = {
    308: OpenApiResponse(
        MovedSerializer, description="an old route, for one release: where it lives now"
    )
}


class PublishedImportView(APIView):
    """A published contrast set in one step (docs/published/) into the project `slug`, for its
    admins; 404, as for any project one cannot see, when there is no such project."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": PublishedImportSerializer},
        responses={
            200: PublishedResultSerializer,
            201: PublishedResultSerializer,
            202: ImportJobSerializer,
            400: REFUSED,
            **MOVED,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        if not Project.objects.filter(slug=slug).exists() and may_create_projects(request.user):
            # It made a new project of that slug, until the route of its own (one release).
            return moved(f"/api/import/published/?slug={slug}", "An import into a new project")
        project = project_for(request.user, slug, Role.ADMIN)
        data = PublishedImportSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        files = {name: values[name] for name in PUBLISHED_FILES if values.get(name)}
        options = {"dataset": values["dataset"], "accept": not values["to_validation"]}
        return _import(request, project, ImportJob.Kind.PUBLISHED, files, options)


class NewProjectPublishedImportView(APIView):
    """A published contrast set in one step into a new project made from the dataset's
    template (staff and `can_create_projects` users), in the request, whole or not at all.
    The slug is the form's (or the query's, where the old route sent it)."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": NewProjectPublishedImportSerializer},
        responses={201: PublishedResultSerializer, 400: REFUSED},
    )
    def post(self, request: Request) -> Response:
        check_may_create_projects(request.user)
        data = NewProjectPublishedImportSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        if "slug" not in values:  # the old route's 308 sends it in the query
            query = NewProjectSlugSerializer(data=request.query_params)
            query.is_valid(raise_exception=True)
            values["slug"] = query.validated_data.get("slug", "")
        options = {
            "dataset": values["dataset"],
            "accept": not values["to_validation"],
            "slug": values["slug"],
            "name": values.get("name", ""),
        }
        files = {name: values[name] for name in PUBLISHED_FILES if values.get(name)}
        result = import_now(
            project=None,
            user=request.user,
            kind=ImportJob.Kind.PUBLISHED,
            files=files,
            options=options,
        )
        answer = PublishedResultSerializer(result).data
        return Response(answer, status=status.HTTP_201_CREATED)


def admin_import_job(user: Any, slug: str, pk: int) -> ImportJob:
    """The project's import job `pk`, for its admins."""
    return get_object_or_404(ImportJob, project=project_for(user, slug, Role.ADMIN), pk=pk)


class ImportJobView(APIView):
    @extend_schema(responses=ImportJobSerializer)
    def get(self, request: Request, slug: str, pk: int) -> Response:
        """The background import job `pk`."""
        return Response(ImportJobSerializer(admin_import_job(request.user, slug, pk)).data)

    @extend_schema(request=None, responses=MOVED, deprecated=True)
    def delete(self, request: Request, slug: str, pk: int) -> Response:
        """Moved: an import batch is undone at DELETE /api/projects/{slug}/batches/{batch}/
        (this route took a batch's id where its GET takes a job's)."""
        project_for(request.user, slug, Role.ADMIN)
        return moved(f"/api/projects/{slug}/batches/{pk}/", "The undo of an import batch")


class ImportJobActionView(JobActionView):
    """Cancel a queued or running background import (nothing of it is committed), or retry a
    failed or cancelled one from its stored files."""

    find = staticmethod(admin_import_job)
    actions = JOB_ACTIONS
    output = ImportJobSerializer
