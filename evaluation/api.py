"""Model specs and evaluation runs over the API (SPEC §6). Admins only."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.pagination import page_of, paginated
from annotation.permissions import admin_release, raw_field
from config.edge import parse_id
from evaluation import analysis_services, services
from evaluation.access import (
    admin_analysis,
    admin_model,
    admin_project,
    admin_projects,
    admin_run,
    analysis_project,
    require_some_admin,
)
from evaluation.models import Analysis, EvaluationRun, ModelSpec


class ModelInputSerializer(serializers.Serializer):
    project = serializers.SlugField()
    name = serializers.CharField(max_length=100)
    kind = serializers.ChoiceField(choices=ModelSpec.Kind.choices)
    source = serializers.CharField(max_length=500)  # type: ignore[assignment]  # popped by DRF
    label_mapping = serializers.DictField(child=serializers.CharField(), default=dict)
    max_length = serializers.IntegerField(min_value=1, max_value=8192, default=256)
    batch_size = serializers.IntegerField(min_value=1, max_value=4096, default=32)
    device = serializers.ChoiceField(choices=ModelSpec.Device.choices, default="auto")
    precision = serializers.ChoiceField(choices=ModelSpec.Precision.choices, default="fp32")
    prompt = serializers.CharField(
        max_length=500, default="{source}\n", trim_whitespace=False, allow_blank=True
    )
    num_beams = serializers.IntegerField(min_value=1, max_value=16, default=1)
    max_new_tokens = serializers.IntegerField(min_value=1, max_value=1024, default=64)
    stride = serializers.IntegerField(min_value=1, max_value=4096, default=128)
    max_answer_tokens = serializers.IntegerField(min_value=1, max_value=1024, default=30)


class ModelOutputSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.slug")

    class Meta:
        model = ModelSpec
        fields = ["id", "project", "name", "kind", "source", "label_mapping", "max_length",
                  "batch_size", "device", "precision", "prompt", "num_beams", "max_new_tokens",
                  "stride", "max_answer_tokens", "created_at"]  # fmt: skip


class RunInputSerializer(serializers.Serializer):
    release = serializers.IntegerField()
    model = serializers.IntegerField()
    split = serializers.ChoiceField(choices=["train", "dev", "test"], default="test")


class RunOutputSerializer(serializers.ModelSerializer):
    release = serializers.IntegerField(source="release_id")
    model = serializers.IntegerField(source="model_id")
    progress = serializers.SerializerMethodField()

    class Meta:
        model = EvaluationRun
        fields = [
            "id", "release", "model", "split", "status", "progress", "examples_per_second",
            "error", "metrics", "attempts", "created_at", "started_at", "finished_at",
        ]  # fmt: skip

    def get_progress(self, run: EvaluationRun) -> dict[str, Any]:
        return {"done": run.done, "total": run.total, "percent": run.percent}


class ModelListView(APIView):
    @extend_schema(operation_id="models_list", responses=page_of(ModelOutputSerializer))
    def get(self, request: Request) -> Response:
        specs = ModelSpec.objects.filter(project__in=admin_projects(request.user))
        return paginated(request, self, specs.select_related("project"), ModelOutputSerializer)

    @extend_schema(request=ModelInputSerializer, responses={201: ModelOutputSerializer})
    def post(self, request: Request) -> Response:
        # Who asks comes before what they send: non-admins learn nothing from validation.
        require_some_admin(request.user)
        if raw_field(request, "project") is not None:
            admin_project(request.user, str(raw_field(request, "project")))
        data = ModelInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        project = admin_project(request.user, values.pop("project"))
        spec = services.model_register(project=project, user=request.user, **values)
        return Response(ModelOutputSerializer(spec).data, status=status.HTTP_201_CREATED)


class RunListView(APIView):
    @extend_schema(operation_id="evaluations_list", responses=page_of(RunOutputSerializer))
    def get(self, request: Request) -> Response:
        runs = EvaluationRun.objects.filter(release__project__in=admin_projects(request.user))
        return paginated(request, self, runs, RunOutputSerializer)

    @extend_schema(request=RunInputSerializer, responses={202: RunOutputSerializer})
    def post(self, request: Request) -> Response:
        require_some_admin(request.user)
        for key, check in (("release", admin_release), ("model", admin_model)):
            if raw_field(request, key) is not None:
                check(request.user, parse_id(raw_field(request, key)) or 0)
        data = RunInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        release = admin_release(request.user, data.validated_data["release"])
        model = admin_model(request.user, data.validated_data["model"])
        run = services.evaluation_enqueue(
            release=release, model=model, split=data.validated_data["split"], user=request.user
        )
        return Response(RunOutputSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class RunDetailView(APIView):
    @extend_schema(responses=RunOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(RunOutputSerializer(admin_run(request.user, pk)).data)


class RunActionView(APIView):
    action = ""

    @extend_schema(request=None, responses=RunOutputSerializer)
    def post(self, request: Request, pk: int) -> Response:
        run = admin_run(request.user, pk)
        if self.action == "cancel":
            run = services.evaluation_cancel(run=run)
        else:
            run = services.evaluation_retry(run=run)
        return Response(RunOutputSerializer(run).data)


class AnalysisOutputSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.slug")
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Analysis
        fields = ["id", "project", "kind", "params", "status", "progress", "result", "error",
                  "attempts", "created_at", "started_at", "finished_at"]  # fmt: skip

    def get_progress(self, analysis: Analysis) -> dict[str, Any]:
        return {"done": analysis.done, "total": analysis.total, "percent": analysis.percent}


class AnalysisInputSerializer(serializers.Serializer):
    """The kind, and its parameters beside it (SPEC §10.3): runs, or release and the rest."""

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
        analysis = analysis_services.analysis_create(
            project=project, user=request.user, kind=data.validated_data["kind"], params=params
        )
        return Response(AnalysisOutputSerializer(analysis).data, status=status.HTTP_202_ACCEPTED)


class AnalysisDetailView(APIView):
    @extend_schema(responses=AnalysisOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(AnalysisOutputSerializer(admin_analysis(request.user, pk)).data)


class AnalysisActionView(APIView):
    action = ""

    @extend_schema(request=None, responses=AnalysisOutputSerializer)
    def post(self, request: Request, pk: int) -> Response:
        analysis = admin_analysis(request.user, pk)
        if self.action == "cancel":
            analysis = analysis_services.analysis_cancel(analysis=analysis)
        else:
            analysis = analysis_services.analysis_retry(analysis=analysis)
        return Response(AnalysisOutputSerializer(analysis).data)
