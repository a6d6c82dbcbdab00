"""Model specs over the API (docs/api.md). Admins only."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.pagination import page_of, paginated
from annotation.permissions import raw_field
from evaluation.access import admin_model, admin_project, admin_projects, require_some_admin
from evaluation.models import ModelSpec
from evaluation.runs.kinds import KIND_CHOICES
from evaluation.specs import services
from evaluation.specs.fields import MODEL_FIELDS, api_field, kind_choices


class ModelInputSerializer(serializers.Serializer):
    # The project's slug, then a model spec's settings as evaluation/specs/fields.py declares
    # them, for the Models page's form too (no docstring: it would be the schema's description).

    project = serializers.SlugField()

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = {**super().get_fields(), **{f.name: api_field(f) for f in MODEL_FIELDS}}
        fields["kind"].choices = kind_choices()  # type: ignore[attr-defined]
        return fields


class ModelOutputSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.slug")
    kind = serializers.ChoiceField(choices=KIND_CHOICES, read_only=True)
    has_api_key = serializers.BooleanField(read_only=True)

    class Meta:
        model = ModelSpec
        fields = [
            "id",
            "project",
            "name",
            "kind",
            "source",
            "label_mapping",
            "max_length",
            "batch_size",
            "device",
            "precision",
            "prompt",
            "verbalizers",
            "target_delimiter",
            "few_shot",
            "few_shot_split",
            "chat_template",
            "stop",
            "num_beams",
            "max_new_tokens",
            "stride",
            "max_answer_tokens",
            "base_url",
            "has_api_key",
            "concurrency",
            "timeout",
            "scoring",
            "price_prompt",
            "price_completion",
            "allow_random_weights",
            "created_at",
        ]


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


class CheckSerializer(serializers.Serializer):
    ok = serializers.BooleanField(help_text="no problem stops a run of this model")
    problems = serializers.ListField(child=serializers.CharField(), help_text="what stops a run")
    notes = serializers.ListField(
        child=serializers.CharField(), help_text="what the server lacks, and how runs go around it"
    )
    lists_source = serializers.BooleanField(allow_null=True)
    echo = serializers.ChoiceField(choices=["aligned", "shifted", "wrong", "absent", "unknown"])
    top = serializers.IntegerField(help_text="top log-probabilities given for the next token")
    repeatable = serializers.BooleanField(allow_null=True)


class ModelCheckView(APIView):
    """Canary requests to a served model's server: whether it answers, lists the model, and
    gives right log-probabilities (docs/models.md, the Check)."""

    @extend_schema(operation_id="models_check", request=None, responses=CheckSerializer)
    def post(self, request: Request, pk: int) -> Response:
        spec = admin_model(request.user, pk)
        return Response(services.model_check(spec=spec).as_dict())
