"""Webhooks over the API (docs/api.md): list and register a project's, remove one, send it a
test event, and page through its deliveries with every attempt's answer. Admins only."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models.webhooks import EVENTS
from annotation.pagination import page_of, paginated
from annotation.permissions import Role, project_for
from annotation.webhooks import events, selectors, services

# An http(s) address without credentials or #fragment (the host rules come after).
URL = r"^https?://([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?(/[^\s#]*)?$"


class WebhookInputSerializer(serializers.Serializer):
    url = serializers.RegexField(URL, max_length=2000, help_text="where each event is posted")
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENTS), min_length=1, max_length=len(EVENTS)
    )


class WebhookSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.CharField())
    trusted = serializers.BooleanField(help_text="registered by staff: its host is not checked")
    created_at = serializers.DateTimeField()


class WebhookCreatedSerializer(WebhookSerializer):
    secret = serializers.CharField(
        help_text="the signing secret (whsec_…), given this once: keep it to verify signatures"
    )


class AttemptSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    sent_at = serializers.DateTimeField()
    status_code = serializers.IntegerField(allow_null=True, help_text="null: no answer came")
    body_excerpt = serializers.CharField(help_text="the answer's first 1,000 characters")
    error = serializers.CharField()


class DeliverySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    message_id = serializers.CharField(help_text="its webhook-id header")
    event = serializers.CharField()
    status = serializers.ChoiceField(choices=["pending", "succeeded", "failed"])
    payload = serializers.JSONField(help_text='the body: {"type", "timestamp", "data"}')
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    attempts = AttemptSerializer(many=True, source="attempt_rows.all")


class WebhookListView(APIView):
    @extend_schema(operation_id="projects_webhooks_list", responses=page_of(WebhookSerializer))
    def get(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        return paginated(request, self, project.webhooks.order_by("pk"), WebhookSerializer)

    @extend_schema(
        request={"application/json": WebhookInputSerializer},
        responses={201: WebhookCreatedSerializer},
    )
    def post(self, request: Request, slug: str) -> Response:
        """Register a webhook: the answer holds its signing secret, shown this once."""
        project = project_for(request.user, slug, Role.ADMIN)
        data = WebhookInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        webhook, secret = services.webhook_create(
            project=project, actor=request.user, **data.validated_data
        )
        body = WebhookCreatedSerializer({**WebhookSerializer(webhook).data, "secret": secret})
        return Response(body.data, status=status.HTTP_201_CREATED)


class WebhookDetailView(APIView):
    @extend_schema(responses={204: None})
    def delete(self, request: Request, slug: str, pk: int) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        services.webhook_delete(webhook=selectors.webhook_of(project, pk), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookTestView(APIView):
    @extend_schema(request=None, responses={202: None})
    def post(self, request: Request, slug: str, pk: int) -> Response:
        """Send the webhook a test event (`webhook.test`), delivered as any event is."""
        project = project_for(request.user, slug, Role.ADMIN)
        events.send_test(selectors.webhook_of(project, pk))
        return Response(status=status.HTTP_202_ACCEPTED)


class DeliveryListView(APIView):
    @extend_schema(responses=page_of(DeliverySerializer))
    def get(self, request: Request, slug: str, pk: int) -> Response:
        """The webhook's deliveries, newest first, each with its attempts and their answers."""
        project = project_for(request.user, slug, Role.ADMIN)
        webhook = selectors.webhook_of(project, pk)
        return paginated(request, self, selectors.deliveries_of(webhook), DeliverySerializer)
