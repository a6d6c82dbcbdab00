"""Notifications over the API (docs/api.md): a user's own inbox, marking read, and their
choices of kinds and e-mail. Any signed-in user; nobody reads or marks another's."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.errors import DomainError
from annotation.models import NotificationPreference
from annotation.models.notifications import KINDS
from annotation.notifications import selectors, services
from annotation.pagination import page_of, paginated


class NotificationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=list(KINDS))
    project = serializers.CharField(source="project.slug", help_text="the project's slug")
    text = serializers.CharField()
    url = serializers.CharField(help_text="the page it concerns, a path on this site, or ''")
    created_at = serializers.DateTimeField()
    read = serializers.SerializerMethodField()

    def get_read(self, row: object) -> bool:
        return getattr(row, "read_at", None) is not None


class ReadSerializer(serializers.Serializer):
    ids = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        max_length=1000,
        help_text="the notifications to mark read (others' ids change nothing)",
    )
    all = serializers.BooleanField(default=False, help_text="mark every one of yours read")

    def validate(self, attrs: dict) -> dict:  # type: ignore[type-arg]
        if "ids" not in attrs and not attrs["all"]:
            raise serializers.ValidationError({"ids": "Give ids, or all: true."})
        return attrs


class ReadDoneSerializer(serializers.Serializer):
    marked = serializers.IntegerField(help_text="how many were unread and are read now")
    unread = serializers.IntegerField(help_text="how many of yours are still unread")


class RequiredBoolean(serializers.BooleanField):
    """Required in a form body too, as in JSON: DRF reads a form that leaves a boolean out as
    false (an unticked box), which the schema does not say."""

    default_empty_html = empty


class PreferenceSerializer(serializers.Serializer):
    kinds = serializers.ListField(
        child=serializers.ChoiceField(choices=list(KINDS)),
        max_length=len(KINDS),
        help_text="the kinds you get; the others are not made for you",
    )
    email = RequiredBoolean(help_text="an e-mailed digest of the unread, hourly at most")


class NotificationListView(APIView):
    @extend_schema(
        operation_id="notifications_list",
        parameters=[
            OpenApiParameter("unread", str, enum=["true", "false"], description="the unread alone")
        ],
        responses=page_of(NotificationSerializer),
    )
    def get(self, request: Request) -> Response:
        """Your notifications, newest first (?unread=1: the unread alone)."""
        unread = request.query_params.get("unread", "false")
        if unread not in ("true", "false"):  # a blank one too, which a serializer lets by
            raise DomainError("unread is true or false.", field="unread")
        unread_only = unread == "true"
        rows = selectors.inbox(request.user, unread_only=unread_only)
        return paginated(request, self, rows, NotificationSerializer)


class NotificationReadView(APIView):
    @extend_schema(request=ReadSerializer, responses=ReadDoneSerializer)
    def post(self, request: Request) -> Response:
        """Mark some of your notifications read, or all of them; others' ids change nothing."""
        data = ReadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        ids = None if data.validated_data["all"] else data.validated_data.get("ids", [])
        marked = services.mark_read(user=request.user, ids=ids)
        body = {"marked": marked, "unread": selectors.inbox(request.user, unread_only=True).count()}
        return Response(ReadDoneSerializer(body).data)


class PreferenceView(APIView):
    @extend_schema(responses=PreferenceSerializer)
    def get(self, request: Request) -> Response:
        return Response(PreferenceSerializer(NotificationPreference.of(request.user)).data)

    @extend_schema(request=PreferenceSerializer, responses=PreferenceSerializer)
    def put(self, request: Request) -> Response:
        data = PreferenceSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        saved = services.preferences_save(user=request.user, **data.validated_data)
        return Response(PreferenceSerializer(saved).data)
