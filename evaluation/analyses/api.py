"""Analyses over the API (docs/api.md). Admins only."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.jobs.api import JobActionView
from annotation.pagination import page_of, paginated
from annotation.permissions import raw_field
from evaluation.access import (
    admin_analysis,
    admin_projects,
    analysis_project,
    require_some_admin,
)
from evaluation.analyses import services
from evaluation.models import Analysis


class AnalysisOutputSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.slug")
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Analysis
        fields = [
            "id",
            "project",
            "kind",
            "params",
            "status",
            "progress",
            "result",
            "error",
            "attempts",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_progress(self, analysis: Analysis) -> dict[str, Any]:
        return {"done": analysis.done, "total": analysis.total, "percent": analysis.percent}


class AnalysisInputSerializer(serializers.Serializer):
    """The kind, and its parameters beside it (docs/analyses.md): runs, or release and the rest."""

    kind = serializers.ChoiceField(choices=Analysis.Kind.choices)


class AnalysisListView(APIView):
    @extend_schema(operation_id="analyses_list", responses=page_of(AnalysisOutputSerializer))
    def get(self, request: Request) -> Response:
        analyses = Analysis.objects.filter(project__in=admin_projects(request.user))
        return paginated(
            request, self, analyses.select_related("project"), AnalysisOutputSerializer
        )

    @extend_schema(request=AnalysisInputSerializer, responses={202: AnalysisOutputSerializer})
    def post(self, request: Request) -> Response:
        require_some_admin(request.user)
        project = analysis_project(
            request.user, raw_field(request, "release"), raw_field(request, "runs")
        )
        data = AnalysisInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        params = {k: v for k, v in dict(request.data).items() if k != "kind"}
        analysis = services.analysis_create(
            project=project, user=request.user, kind=data.validated_data["kind"], params=params
        )
        return Response(AnalysisOutputSerializer(analysis).data, status=status.HTTP_202_ACCEPTED)


class AnalysisDetailView(APIView):
    @extend_schema(responses=AnalysisOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(AnalysisOutputSerializer(admin_analysis(request.user, pk)).data)


class AnalysisActionView(JobActionView):
    """Cancel a queued or running analysis, or retry a failed or cancelled one."""

    find = staticmethod(admin_analysis)
    actions = services.ACTIONS
    output = AnalysisOutputSerializer
