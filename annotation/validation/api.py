"""Validation over the API: next item, votes, statistics, adjudication and validators."""

from typing import Any

from django.contrib.auth import get_user_model
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.crowd.services import qualification, studies
from annotation.crowd.services.state import validate_state
from annotation.downloads import FORMAT_PARAMETER, RESPONSES, checked_format, download
from annotation.errors import DomainError
from annotation.models import GoldItem, Perturbation, ValidationItem
from annotation.pagination import page_of, paginated
from annotation.permissions import Role, project_for
from annotation.text.fields import field_html
from annotation.text.parsing import json_only
from annotation.validation import downloads
from annotation.validation.serializers import (
    STATS,
    AdjudicatedSerializer,
    AdjudicateSerializer,
    AnswerStatsSerializer,
    NextItemSerializer,
    QualifiedSerializer,
    QualifySerializer,
    StatsSerializer,
    ValidatorFiguresSerializer,
    VoteInputSerializer,
    VoteResultSerializer,
)
from annotation.validation.services import adjudication, quality, queue, votes
from annotation.validation.stats import project_stats, validator_figures


def next_item_payload(project: Any, item: ValidationItem | GoldItem) -> dict[str, Any]:
    """An item as NextItemSerializer documents it, built as it is sent: the hot path's answers
    (next, and a vote's) skip the serializers' field-by-field pass, which cost more CPU than
    the payload (benchmarks/hot_path_profile.py)."""
    return {
        "item": item.pk,
        "fields": {name: item.fields.get(name, "") for name in project.field_names},
        # Each field as the page shows it: escaped text, sanitised HTML, or an image.
        "fields_html": {
            name: str(field_html(value, kind))
            for name, value, kind in project.shown_fields(item.fields)
        },
        "labels": project.labels,
        "extra_labels": project.extra_labels,
        "flags": votes.FLAGS,
    }


class NextItemView(APIView):
    @extend_schema(responses={200: NextItemSerializer, 204: None})
    def get(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.VALIDATOR)
        more = studies.serves_more(request, slug)
        item = queue.next_item(project=project, validator=request.user) if more else None
        if item is None:
            crowd = validate_state(project=project, validator=request.user, session=request.session)
            if crowd.ended:
                raise DomainError(crowd.ended_message, code="forbidden")
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(next_item_payload(project, item))


class VoteView(APIView):
    @extend_schema(request=VoteInputSerializer, responses={201: VoteResultSerializer})
    def post(self, request: Request, slug: str, item: int) -> Response:
        """Vote, and get the next item leased in the same round trip (null when none is
        left): `{"vote": ..., "done": ..., "next": ...}`. A repeat of one's vote on the item
        answers 200 with the vote as recorded, counted once."""
        project = project_for(request.user, slug, Role.VALIDATOR)
        data = VoteInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        cast = votes.vote_cast(
            project=project, item_id=item, validator=request.user, **data.validated_data
        )
        now = studies.progress(project=project, validator=request.user, session=request.session)
        following = queue.next_item(project=project, validator=request.user) if now.serves else None
        answer = {
            "vote": {
                "item": cast.item_id,
                "label": cast.label,
                "answer": cast.answer,
                "flags": cast.flags,
            },
            "done": now.done,
            "next": next_item_payload(project, following) if following else None,
        }
        return Response(
            answer, status=status.HTTP_201_CREATED if cast.created else status.HTTP_200_OK
        )

    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request, slug: str, item: int) -> Response:
        """Take back one's vote while the item is still open (undo)."""
        project = project_for(request.user, slug, Role.VALIDATOR)
        votes.check_undo_allowed(project)
        target = get_object_or_404(ValidationItem, project=project, pk=item)
        votes.vote_undo(item=target, validator=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class StatsView(APIView):
    @extend_schema(responses=STATS)
    def get(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        shape = AnswerStatsSerializer if project.is_free_text else StatsSerializer
        return Response(shape(project_stats(project)).data)


class AdjudicateView(APIView):
    @extend_schema(request=AdjudicateSerializer, responses=AdjudicatedSerializer)
    def post(self, request: Request, slug: str, pk: int) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        perturbation = get_object_or_404(Perturbation, project=project, pk=pk)
        data = AdjudicateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        perturbation = adjudication.perturbation_adjudicate(
            perturbation=perturbation, admin=request.user, **data.validated_data
        )
        return Response(AdjudicatedSerializer(perturbation).data)


class ValidatorListView(APIView):
    @extend_schema(responses=page_of(ValidatorFiguresSerializer))
    def get(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        return paginated(request, self, validator_figures(project), ValidatorFiguresSerializer)


class VoteDownloadView(APIView):
    @extend_schema(
        parameters=[
            FORMAT_PARAMETER,
            OpenApiParameter(
                "by",
                enum=["vote", "item", "validator"],
                default="vote",
                description="one row per vote, per item with its counts, or per validator",
            ),
        ],
        responses=RESPONSES,
    )
    def get(self, request: Request, slug: str) -> StreamingHttpResponse:
        """Every vote of the project, every item with its counted votes per label, or every
        validator with the Validators page's figures."""
        project = project_for(request.user, slug, Role.ADMIN)
        fmt = checked_format(request.query_params.get("format"))
        by = request.query_params.get("by", "vote")
        rows = {
            "vote": downloads.vote_rows,
            "item": downloads.item_rows,
            "validator": downloads.validator_rows,
        }.get(by)
        if rows is None:
            raise DomainError("by is vote, item or validator.", field="by")
        return download(rows(project), fmt, f"{project.slug}-{by}s")


class ValidatorQualifyView(APIView):
    parser_classes = json_only()  # a form without `qualified` would read as false

    @extend_schema(request=QualifySerializer, responses=QualifiedSerializer)
    def post(self, request: Request, slug: str, username: str) -> Response:
        """`{qualified}` qualifies or unqualifies a validator; `{action: "retest"}` gives one
        who failed the qualification test one more attempt (docs/validation.md)."""
        project = project_for(request.user, slug, Role.ADMIN)
        validator = get_user_model().objects.filter(username=username).first()
        data = QualifySerializer(data=request.data)
        data.is_valid(raise_exception=True)
        choice = data.validated_data
        if ("qualified" in choice) == ("action" in choice):
            raise DomainError("give qualified or action, one of them.")
        validator_id = validator.pk if validator else 0
        if "action" in choice:
            qualification.allow_retest(
                project=project, validator_id=validator_id, actor=request.user
            )
        else:
            quality.validator_set_qualified(
                project=project,
                validator_id=validator_id,
                qualified=choice["qualified"],
                actor=request.user,
            )
        now = qualification.standing(project=project, validator=validator)
        answer = {
            "validator": username,
            "qualified": now.qualified,
            "qualification": now.qualification,
        }
        return Response(QualifiedSerializer(answer).data)
