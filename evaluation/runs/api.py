"""Evaluation runs over the API (docs/api.md). Admins only."""

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.downloads import FORMAT_PARAMETER, RESPONSES, checked_format, download
from annotation.errors import DomainError
from annotation.jobs.api import JobActionView
from annotation.pagination import page_of, paginated
from annotation.permissions import admin_release, raw_field
from annotation.text.parsing import parse_id
from evaluation.access import admin_model, admin_projects, admin_run, require_some_admin
from evaluation.models import EvaluationRun
from evaluation.runs import compare, results, services


class RunInputSerializer(serializers.Serializer):
    release = serializers.IntegerField()
    model = serializers.IntegerField(required=False, help_text="a registered model, or:")
    predictions = serializers.FileField(
        required=False,
        help_text="a predictions file (multipart): a JSON object from example id to prediction, "
        'or JSON Lines {"id", "prediction", "role"}; docs/workflows.md',
    )
    split = serializers.ChoiceField(choices=["train", "dev", "test"], default="test")
    shards = serializers.IntegerField(
        min_value=1,
        max_value=64,
        default=1,
        help_text="a model's run cut into this many parts, by contrast set, that several "
        "workers take at once (docs/models.md)",
    )
    reuse_answers = serializers.BooleanField(
        default=True,
        help_text="a served model: take the answers earlier runs of the same model got to the "
        "same requests, rather than ask the server again (docs/models.md)",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("model" in attrs) == ("predictions" in attrs):
            raise serializers.ValidationError("Give a model or a predictions file, not both.")
        return attrs


class RunOutputSerializer(serializers.ModelSerializer):
    release = serializers.IntegerField(source="release_id")
    model = serializers.IntegerField(source="model_id")
    progress = serializers.SerializerMethodField()

    class Meta:
        model = EvaluationRun
        fields = [
            "id",
            "release",
            "model",
            "split",
            "shards",
            "reuse_answers",
            "status",
            "progress",
            "examples_per_second",
            "notice",
            "error",
            "metrics",
            "attempts",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_progress(self, run: EvaluationRun) -> dict[str, Any]:
        return {"done": run.done, "total": run.total, "percent": run.percent}


class RunListView(APIView):
    @extend_schema(operation_id="evaluations_list", responses=page_of(RunOutputSerializer))
    def get(self, request: Request) -> Response:
        runs = EvaluationRun.objects.filter(release__project__in=admin_projects(request.user))
        return paginated(request, self, runs, RunOutputSerializer)

    @extend_schema(request=RunInputSerializer, responses={202: RunOutputSerializer})
    def post(self, request: Request) -> Response:
        require_some_admin(request.user)
        # The release and the model are checked before the payload is, once: the run is
        # queued with these (a payload that passes names the same ids: parse_id reads no id
        # that the serializer's integers would read otherwise).
        raw_release, raw_model = raw_field(request, "release"), raw_field(request, "model")
        release = None if raw_release is None else admin_release(request.user, _id(raw_release))
        model = None if raw_model is None else admin_model(request.user, _id(raw_model))
        data = RunInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        assert release is not None  # the serializer requires it
        if "predictions" in values:
            run = services.predictions_enqueue(
                release=release,
                split=values["split"],
                upload=values["predictions"],
                user=request.user,
            )
        else:
            assert model is not None  # the serializer requires a model or a file
            run = services.evaluation_enqueue(
                release=release,
                model=model,
                split=values["split"],
                user=request.user,
                shards=values["shards"],
                reuse_answers=values["reuse_answers"],
            )
        return Response(RunOutputSerializer(run).data, status=status.HTTP_202_ACCEPTED)


def _id(raw: object) -> int:
    return parse_id(raw) or 0  # not an id: no such release or model


class RunDetailView(APIView):
    @extend_schema(responses=RunOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(RunOutputSerializer(admin_run(request.user, pk)).data)


class RunPredictionsView(APIView):
    @extend_schema(
        parameters=[
            FORMAT_PARAMETER,
            OpenApiParameter(
                "sets",
                enum=["all", "failed"],
                default="all",
                description="failed: only the members of the sets the model failed",
            ),
        ],
        responses=RESPONSES,
    )
    def get(self, request: Request, pk: int) -> StreamingHttpResponse:
        """A succeeded run's predictions, one per scored example, as JSON Lines or CSV."""
        run = admin_run(request.user, pk)
        fmt = checked_format(request.query_params.get("format"))
        sets = request.query_params.get("sets", "all")
        if sets not in ("all", "failed"):
            raise DomainError("sets is all or failed.", field="sets")
        if run.status != EvaluationRun.Status.SUCCEEDED:
            raise DomainError("The run has no predictions until it succeeds.", code="conflict")
        rows = results.prediction_rows(run, failed_only=sets == "failed")
        name = f"run-{run.pk}-{'failed-sets' if sets == 'failed' else 'predictions'}"
        return download(rows, fmt, name)


class RunActionView(JobActionView):
    """Cancel a queued or running evaluation run (and its shards), or retry a failed or
    cancelled one."""

    find = staticmethod(admin_run)
    actions = services.ACTIONS
    output = RunOutputSerializer


class ComparedFigureSerializer(serializers.Serializer):
    """One figure of two runs: each run's value, b - a, its paired 95% interval (bootstrap over
    contrast sets, the same sets for both runs) and the paired test's p-value."""

    values = serializers.ListField(child=serializers.FloatField(allow_null=True))
    difference = serializers.FloatField(allow_null=True)
    interval = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    p_value = serializers.FloatField(allow_null=True)
    test = serializers.CharField()
    discordant = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        help_text="McNemar's tests: units right in run a only, and in run b only",
    )
    p_holm = serializers.FloatField(
        allow_null=True, required=False, help_text="per tag: Holm-adjusted over the tags"
    )


class WithinRunDropSerializer(serializers.Serializer):
    drop = serializers.FloatField(allow_null=True)
    interval = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    p_value = serializers.FloatField(allow_null=True)
    test = serializers.CharField()


class ComparisonSerializer(serializers.Serializer):
    runs = serializers.ListField(child=serializers.IntegerField())
    kind = serializers.ChoiceField(choices=["labels", "answers", "pairs"])
    sets = serializers.IntegerField()
    discordance = serializers.FloatField(
        allow_null=True, help_text="the share of sets consistent in one run only"
    )
    per_tag = serializers.DictField(child=ComparedFigureSerializer())
    within_run = serializers.ListField(
        child=WithinRunDropSerializer(), help_text="each run's drop, originals vs perturbations"
    )
    power = serializers.DictField(help_text="docs/metrics.md, the sets a difference needs")
    samples = serializers.IntegerField()
    permutations = serializers.IntegerField()
    seed = serializers.IntegerField()
    level = serializers.FloatField()

    def get_fields(self) -> dict[str, serializers.Field]:
        figures = {key: ComparedFigureSerializer(required=False) for key in results.PAIRED}
        return {**super().get_fields(), **figures}


class RunCompareView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "runs",
                str,
                required=True,
                pattern=r"^[0-9]{1,18},[0-9]{1,18}$",
                description="two succeeded run ids: runs=12,15",
            )
        ],
        responses=ComparisonSerializer,
    )
    def get(self, request: Request) -> Response:
        """Two runs on the same release and split, figure by figure, paired (docs/metrics.md)."""
        a, b = compare.runs_to_compare(request.user, request.query_params.get("runs"))
        return Response(ComparisonSerializer(compare.run_comparison(a, b)).data)
