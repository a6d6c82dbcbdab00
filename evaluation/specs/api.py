"""Model specs over the API (docs/api.md). Admins only."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.pagination import page_of, paginated
from annotation.permissions import raw_field
from evaluation.access import admin_model, admin_project, admin_projects, require_some_admin
from evaluation.models import ModelSpec, default_stop
from evaluation.specs import services


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
        max_length=4000,
        default="",
        trim_whitespace=False,
        allow_blank=True,
        help_text="language models: a template over the fields; blank: the project's prompt",
    )
    verbalizers = serializers.DictField(
        child=serializers.CharField(max_length=200),
        default=dict,
        help_text="label -> the words scored for it; overrides the project's",
    )
    target_delimiter = serializers.CharField(
        max_length=20, default=" ", trim_whitespace=False, allow_blank=True
    )
    few_shot = serializers.IntegerField(min_value=0, max_value=32, default=0)
    few_shot_split = serializers.CharField(max_length=8, default="", allow_blank=True)
    chat_template = serializers.BooleanField(default=False)
    stop = serializers.ListField(
        child=serializers.CharField(max_length=50, trim_whitespace=False),
        default=default_stop,
        max_length=8,
    )
    num_beams = serializers.IntegerField(min_value=1, max_value=16, default=1)
    max_new_tokens = serializers.IntegerField(min_value=1, max_value=1024, default=64)
    stride = serializers.IntegerField(min_value=1, max_value=4096, default=128)
    max_answer_tokens = serializers.IntegerField(min_value=1, max_value=1024, default=30)
    base_url = serializers.CharField(
        max_length=500,
        default="",
        allow_blank=True,
        help_text="openai-compatible: the server's base URL, e.g. http://host:8000/v1",
    )
    api_key = serializers.CharField(
        max_length=500,
        default="",
        allow_blank=True,
        write_only=True,
        help_text="openai-compatible: the key, kept encrypted and never returned",
    )
    concurrency = serializers.IntegerField(min_value=1, max_value=256, default=4)
    timeout = serializers.IntegerField(min_value=1, max_value=3600, default=120)
    scoring = serializers.ChoiceField(choices=ModelSpec.Scoring.choices, default="loglikelihood")
    price_prompt = serializers.FloatField(min_value=0, required=False, allow_null=True)
    price_completion = serializers.FloatField(min_value=0, required=False, allow_null=True)
    allow_random_weights = serializers.BooleanField(
        default=False,
        help_text="run even where the checkpoint lacks weights its kind needs (a headless "
        "encoder as a classifier): they are initialised at random; for deliberate baselines",
    )


class ModelOutputSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.slug")
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
