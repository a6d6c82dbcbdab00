"""Validation API: next item, votes, stats, adjudication, validators and vote import."""

from typing import Any

from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import validation
from annotation.importers import ImportRejected
from annotation.models import Perturbation, ValidationItem
from annotation.permissions import Role, project_for
from annotation.serializers import ImportErrorsSerializer
from annotation.stats import project_stats, validator_figures
from annotation.vote_import import import_votes


class NextItemSerializer(serializers.Serializer):
    """Everything a validator sees of an item: its fields and the choices. Nothing else."""

    item = serializers.IntegerField()
    fields = serializers.JSONField()  # type: ignore[assignment]  # popped by DRF
    labels = serializers.ListField(child=serializers.CharField())
    extra_labels = serializers.ListField(child=serializers.CharField())
    flags = serializers.ListField(child=serializers.CharField())


class VoteInputSerializer(serializers.Serializer):
    label = serializers.CharField()  # type: ignore[assignment]  # popped by DRF
    flags = serializers.ListField(child=serializers.CharField(), default=list)
    seconds_spent = serializers.IntegerField(min_value=0, default=0)


class VoteOutputSerializer(serializers.Serializer):
    item = serializers.IntegerField(source="item_id")
    label = serializers.CharField()  # type: ignore[assignment]  # popped by DRF
    flags = serializers.ListField(child=serializers.CharField())


class AdjudicateSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["accept", "reject"])


class QualifySerializer(serializers.Serializer):
    qualified = serializers.BooleanField()


def next_item_payload(project: Any, item: ValidationItem) -> dict[str, Any]:
    return {
        "item": item.pk,
        "fields": {name: item.fields.get(name, "") for name in project.field_names},
        "labels": project.labels,
        "extra_labels": project.extra_labels,
        "flags": validation.FLAGS,
    }


class NextItemView(APIView):
    @extend_schema(responses={200: NextItemSerializer, 204: None})
    def get(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.VALIDATOR)
        item = validation.next_item(project=project, validator=request.user)
        if item is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(next_item_payload(project, item))


class VoteView(APIView):
    @extend_schema(request=VoteInputSerializer, responses={201: VoteOutputSerializer})
    def post(self, request: Request, slug: str, item: int) -> Response:
        project = project_for(request.user, slug, Role.VALIDATOR)
        target = get_object_or_404(ValidationItem, project=project, pk=item)
        data = VoteInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            vote, created = validation.vote_cast(
                item=target, validator=request.user, **data.validated_data
            )
        except validation.VoteError as error:
            return Response({"detail": error.message}, status=error.status)
        return Response(
            VoteOutputSerializer(vote).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class StatsView(APIView):
    @extend_schema(responses={200: dict})
    def get(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        return Response(project_stats(project))


class AdjudicateView(APIView):
    @extend_schema(request=AdjudicateSerializer, responses={200: dict})
    def post(self, request: Request, slug: str, pk: int) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        perturbation = get_object_or_404(Perturbation, project=project, pk=pk)
        data = AdjudicateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            perturbation = validation.perturbation_adjudicate(
                perturbation=perturbation, admin=request.user, **data.validated_data
            )
        except validation.AdjudicationError as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
        return Response({"id": perturbation.pk, "status": perturbation.status})


class ValidatorListView(APIView):
    @extend_schema(responses={200: dict})
    def get(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        return Response(validator_figures(project))


class ValidatorQualifyView(APIView):
    @extend_schema(request=QualifySerializer, responses={200: dict})
    def post(self, request: Request, slug: str, username: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        validator = get_object_or_404(get_user_model(), username=username)
        data = QualifySerializer(data=request.data)
        data.is_valid(raise_exception=True)
        validation.validator_set_qualified(
            project=project,
            validator_id=validator.pk,
            qualified=data.validated_data["qualified"],
            actor=request.user,
        )
        return Response({"validator": username, **data.validated_data})


class VoteImportInputSerializer(serializers.Serializer):
    file = serializers.FileField()


class VoteImportView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": VoteImportInputSerializer},
        responses={201: dict, 400: ImportErrorsSerializer},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        data = VoteImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        try:
            n = import_votes(
                project=project, user=request.user, data=upload.read(), source_name=upload.name
            )
        except ImportRejected as rejected:
            return Response(rejected.as_dict(), status=status.HTTP_400_BAD_REQUEST)
        return Response({"imported": n}, status=status.HTTP_201_CREATED)
