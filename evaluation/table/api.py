"""The results table over the API (docs/api.md): as JSON, or downloaded as CSV, Markdown or
LaTeX; and its missing cells queued. Admins only, over the projects they administer."""

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.errors import DomainError
from evaluation.access import admin_projects, require_some_admin
from evaluation.runs.api import RunOutputSerializer
from evaluation.table.formats import FORMATS
from evaluation.table.selectors import (
    INTERVALS,
    SLUGS,
    SPLITS,
    ResultsTable,
    results_table,
    table_query,
)
from evaluation.table.services import results_score_missing

PARAMETERS = [
    OpenApiParameter(
        "projects",
        str,
        pattern=SLUGS,
        description="slugs, comma-separated (default: every project you administer)",
    ),
    OpenApiParameter("split", enum=["train", "dev", "test"], default="test"),
    OpenApiParameter("by", enum=["release", "tag"], default="release"),
    OpenApiParameter(
        "releases", enum=["latest", "all"], default="latest", description="each project's newest"
    ),
    OpenApiParameter(
        "intervals",
        enum=list(INTERVALS),
        default="1",
        description="0: the page and the downloads leave the 95% intervals out",
    ),
]


class FigureSerializer(serializers.Serializer):
    value = serializers.FloatField(allow_null=True)
    interval = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, help_text="95%, bootstrap over sets"
    )
    n = serializers.IntegerField(
        allow_null=True, help_text="originals, perturbations, pairs or sets"
    )


class CellSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["scored", "running", "failed", "missing", "absent"])
    run = serializers.IntegerField(allow_null=True)
    url = serializers.CharField(help_text="the run's page (failed: the newest failed run's)")
    finished_at = serializers.DateTimeField(allow_null=True)
    figures = serializers.DictField(child=FigureSerializer())
    queueable = serializers.BooleanField()


class RowSerializer(serializers.Serializer):
    project = serializers.CharField()
    project_name = serializers.CharField()
    release = serializers.IntegerField()
    version = serializers.CharField()
    tag = serializers.CharField(allow_null=True)
    sets = serializers.IntegerField(help_text="the release's sets; a tag's row: those of the tag")
    cells = serializers.DictField(child=CellSerializer(), help_text="by model name")


class LeftOutSerializer(serializers.Serializer):
    project = serializers.CharField()
    project_name = serializers.CharField()
    reason = serializers.CharField()


class ResultsTableSerializer(serializers.Serializer):
    split = serializers.CharField()
    by = serializers.CharField()
    releases = serializers.CharField()
    projects = serializers.ListField(child=serializers.CharField())
    models = serializers.ListField(child=serializers.CharField())
    figures = serializers.ListField(child=serializers.CharField())
    rows = RowSerializer(many=True)
    left_out = LeftOutSerializer(many=True, help_text="chosen projects with no row, and why")
    missing = serializers.SerializerMethodField()

    def get_missing(self, table: ResultsTable) -> int:
        return len(table.missing)


def download_name(table: ResultsTable, fmt: str) -> str:
    """What the file holds: its projects (or how many), split, rows and releases."""
    projects = (
        "-".join(table.projects) if len(table.projects) <= 3 else f"{len(table.projects)}-projects"
    )
    parts = ["results", projects, table.split, f"by-{table.by}"]
    parts += ["all-releases"] if table.releases == "all" else []
    parts += [] if table.intervals else ["no-intervals"]
    return "-".join(parts) + f".{fmt}"


def table_download(table: ResultsTable, fmt: str) -> HttpResponse:
    content_type, write = FORMATS[fmt]
    response = HttpResponse(write(table), content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{download_name(table, fmt)}"'
    return response


class ResultsView(APIView):
    @extend_schema(
        operation_id="results_table",
        parameters=[
            *PARAMETERS,
            OpenApiParameter("format", enum=["json", *FORMATS], default="json"),
        ],
        responses={
            200: ResultsTableSerializer,
            **{(200, kind): OpenApiTypes.STR for kind, _ in FORMATS.values()},
        },
    )
    def get(self, request: Request) -> Response | HttpResponse:
        """A row per release (or release and tag), a column group per model name: the newest
        successful run's figures, each with its 95% interval and n."""
        require_some_admin(request.user)
        fmt = request.query_params.get("format") or "json"
        if fmt != "json" and fmt not in FORMATS:
            raise DomainError("format is json, csv, md or tex.", field="format")
        query = table_query(request.user, request.query_params, admin_projects(request.user))
        table = results_table(query)
        if fmt == "json":
            return Response(ResultsTableSerializer(table).data)
        return table_download(table, fmt)


class ScoreInputSerializer(serializers.Serializer):
    projects = serializers.RegexField(
        SLUGS,
        required=False,
        help_text="slugs, comma-separated (default: every one you administer)",
    )
    split = serializers.ChoiceField(choices=list(SPLITS), default="test")
    releases = serializers.ChoiceField(choices=["latest", "all"], default="latest")
    shards = serializers.IntegerField(min_value=1, max_value=64, default=1)


class RefusedSerializer(serializers.Serializer):
    project = serializers.CharField()
    version = serializers.CharField()
    model = serializers.CharField()
    reason = serializers.CharField()


class ScoredSerializer(serializers.Serializer):
    queued = RunOutputSerializer(many=True)
    refused = RefusedSerializer(many=True)


class ResultsScoreView(APIView):
    # JSON only: a form's blank `projects` would read as "not given" (every project).
    parser_classes = [JSONParser]

    @extend_schema(request=ScoreInputSerializer, responses={202: ScoredSerializer})
    def post(self, request: Request) -> Response:
        """Score the missing cells: a run for each registered model of a row's release that
        has no successful run on the split and none on its way (sharded as asked)."""
        require_some_admin(request.user)
        data = ScoreInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values: dict[str, Any] = dict(data.validated_data)
        query = table_query(request.user, values, admin_projects(request.user))
        queued, refused = results_score_missing(
            query=query, user=request.user, shards=values["shards"]
        )
        answer = ScoredSerializer({"queued": queued, "refused": refused}).data
        return Response(answer, status=status.HTTP_202_ACCEPTED)
