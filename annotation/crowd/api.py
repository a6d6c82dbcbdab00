"""The crowd over the API: study links and their payments (docs/api.md)."""

from typing import Any

from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.crowd.services import studies
from annotation.downloads import download
from annotation.models import Study
from annotation.permissions import Role, project_for


class StudyInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, min_length=1)
    platform = serializers.ChoiceField(choices=Study.Platform.values)
    items_per_participant = serializers.IntegerField(
        min_value=1, max_value=10_000, required=False, help_text="default: the project's setting"
    )
    completion_code = serializers.RegexField(
        studies.PLATFORM_ID.pattern,
        max_length=64,
        required=False,
        help_text="default: drawn at random",
    )
    max_participants = serializers.IntegerField(
        min_value=1,
        max_value=studies.MAX_PARTICIPANTS,
        required=False,
        help_text="the most participants the link makes; left out: no cap",
    )


class StudySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    platform = serializers.CharField()
    link = serializers.CharField(help_text="the address to give the platform, with its fields")
    items_per_participant = serializers.IntegerField()
    max_participants = serializers.IntegerField(allow_null=True, help_text="null: no cap")
    completion_code = serializers.CharField()
    ended_code = serializers.CharField(help_text="the code of participants the gates stopped")
    participants = serializers.IntegerField()
    completed = serializers.IntegerField()
    created_at = serializers.DateTimeField()


def study_body(request: Request, study: Study, participants: int = 0, completed: int = 0) -> Any:
    return StudySerializer(
        {
            "id": study.pk,
            "name": study.name,
            "platform": study.platform,
            # Built by hand: build_absolute_uri would escape Prolific's {{%...%}} placeholders.
            "link": f"{request.scheme}://{request.get_host()}{studies.study_path(study)}",
            "items_per_participant": study.items_per_participant,
            "max_participants": study.max_participants,
            "completion_code": study.completion_code,
            "ended_code": study.ended_code,
            "participants": participants,
            "completed": completed,
            "created_at": study.created_at,
        }
    ).data


class StudyListView(APIView):
    @extend_schema(responses=StudySerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        rows = studies.study_figures(project)
        return Response(
            [
                study_body(request, r["study"], r["study"].n_participants, r["study"].n_completed)
                for r in rows
            ]
        )

    @extend_schema(request=StudyInputSerializer, responses={201: StudySerializer})
    def post(self, request: Request, slug: str) -> Response:
        """Make a study link: paste its `link` into Prolific or MTurk."""
        project = project_for(request.user, slug, Role.ADMIN)
        data = StudyInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        study = studies.study_create(project=project, actor=request.user, **data.validated_data)
        return Response(study_body(request, study), status=status.HTTP_201_CREATED)


class PaymentsView(APIView):
    @extend_schema(responses={(200, "text/csv"): str})
    def get(self, request: Request, slug: str, pk: int) -> StreamingHttpResponse:
        """One row per participant: their platform ids, items, seconds, and whether they
        passed (docs/validation.md)."""
        project = project_for(request.user, slug, Role.ADMIN)
        study = get_object_or_404(Study, project=project, pk=pk)
        return download(studies.payment_rows(study), "csv", f"{slug}-study-{pk}-payments")
