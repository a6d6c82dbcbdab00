"""Comments over the API (docs/api.md): a perturbation's thread, read and written. Who reads
and who writes is annotation/comments/selectors.py's and services.py's rule, checked before the
payload is read."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.comments import selectors, services
from annotation.errors import DomainError
from annotation.models.comments import MAX_CHARS


class CommentInputSerializer(serializers.Serializer):
    body = serializers.CharField(max_length=MAX_CHARS, help_text="Markdown; @name mentions")


class CommentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    author = serializers.CharField(
        allow_null=True, help_text="null for a validator, who never sees who wrote it"
    )
    body = serializers.CharField(help_text="the Markdown as written")
    html = serializers.CharField(help_text="the Markdown as sanitised HTML, mentions marked")
    created_at = serializers.DateTimeField()
    edited_at = serializers.DateTimeField(allow_null=True)


def _shown(user: Any, perturbation: Any, comment_id: int) -> dict[str, Any]:
    roles = perturbation.project.user_roles
    shown = next(c for c in selectors.thread(user, perturbation, roles) if c.id == comment_id)
    return CommentSerializer(shown).data


def _writer(request: Request, slug: str, pk: int) -> Any:
    """The perturbation, if the user may comment on it: 404 if they may not read it, 403 if
    they read it and may not write."""
    project, perturbation = selectors.readable(request.user, slug, pk)
    if not services.may_write(request.user, perturbation, project.user_roles):  # type: ignore[attr-defined]
        raise DomainError("Only admins, and the perturbation's author, comment.", code="forbidden")
    return perturbation


class CommentListView(APIView):
    @extend_schema(
        operation_id="projects_perturbations_comments_list", responses=CommentSerializer(many=True)
    )
    def get(self, request: Request, slug: str, pk: int) -> Response:
        project, perturbation = selectors.readable(request.user, slug, pk)
        thread = selectors.thread(request.user, perturbation, project.user_roles)  # type: ignore[attr-defined]
        return Response(CommentSerializer(thread, many=True).data)

    @extend_schema(request=CommentInputSerializer, responses={201: CommentSerializer})
    def post(self, request: Request, slug: str, pk: int) -> Response:
        perturbation = _writer(request, slug, pk)
        data = CommentInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        comment = services.comment_posted(
            perturbation=perturbation, author=request.user, body=data.validated_data["body"]
        )
        return Response(
            _shown(request.user, perturbation, comment.pk), status=status.HTTP_201_CREATED
        )


class CommentDetailView(APIView):
    @extend_schema(request=CommentInputSerializer, responses=CommentSerializer)
    def patch(self, request: Request, slug: str, pk: int, comment_id: int) -> Response:
        comment = selectors.comment_of(request.user, slug, pk, comment_id)
        if not comment.is_by(request.user):
            raise DomainError("Only its author edits a comment.", code="forbidden")
        data = CommentInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        body = data.validated_data.get("body", comment.body)  # no body: left as it is
        services.comment_edit(comment=comment, user=request.user, body=body)
        return Response(_shown(request.user, comment.perturbation, comment.pk))

    @extend_schema(responses={204: None})
    def delete(self, request: Request, slug: str, pk: int, comment_id: int) -> Response:
        comment = selectors.comment_of(request.user, slug, pk, comment_id)
        services.comment_delete(comment=comment, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
