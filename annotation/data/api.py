"""The Data page for scripts (docs/api.md): list and filter a project's rows with keyset
pagination, one row with its history, bulk actions, the undo of an import, deleting a project,
and the audit log."""

from urllib.parse import urlencode

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.data import history, records, selectors
from annotation.data.serializers import (
    AuditEntrySerializer,
    BulkResultSerializer,
    BulkSerializer,
    ItemDetailSerializer,
    ItemPageSerializer,
    RemovalSerializer,
)
from annotation.data.services import actions, removal
from annotation.models import ImportBatch, Perturbation
from annotation.models.config import SPLITS
from annotation.pagination import page_of, paginated
from annotation.permissions import Role, project_for

# A positive id or count: what `selectors._whole` accepts.
WHOLE = {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}
FILTERS = [
    OpenApiParameter("kind", enum=list(selectors.KINDS), default="perturbations"),
    # An empty value is no filter, as the Data page's form sends it.
    OpenApiParameter("status", enum=["", *Perturbation.Status.values]),
    OpenApiParameter("split", enum=["", *SPLITS]),
    *(OpenApiParameter(name, str) for name in ("tag", "author", "label", "q")),
    OpenApiParameter(
        "batch",
        WHOLE,
        description="the import batch: the originals it added, or the perturbations it brought "
        "or that were written on its originals",
    ),
    OpenApiParameter("warnings", bool, description="from an import that has warnings"),
    OpenApiParameter("waiting", bool, description="originals waiting for an answer"),
    OpenApiParameter("order", enum=list(selectors.ORDERS), default="newest"),
    OpenApiParameter("after", WHOLE, description="the last id of the previous page"),
    OpenApiParameter(
        "size", WHOLE, description=f"rows per page, at most {selectors.MAX_PAGE_SIZE}"
    ),
]


class ItemListView(APIView):
    @extend_schema(
        operation_id="projects_items_list", parameters=FILTERS, responses=ItemPageSerializer
    )
    def get(self, request: Request, slug: str) -> Response:
        """Admins see every row; experts their own perturbations and the originals under them."""
        project, mine = selectors.reader(request.user, slug)
        filters = selectors.Filters.parse(request.query_params)
        qs = selectors.rows(project, filters, author=mine)
        size = request.query_params.get("size")
        page = selectors.page_of(
            records.with_relations(filters.kind, qs, mine),
            filters,
            request.query_params.get("after"),
            size,
            project=project,
        )
        count, more = selectors.count_upto(qs, filters, page)
        after = filters.query(after=page.after, **({"size": size} if size else {}))
        url = request.build_absolute_uri(request.path)
        answer = {
            "results": records.records(filters.kind, page.rows),
            "count": count,
            "count_is_lower_bound": more,
            "next": f"{url}?{urlencode(after)}" if page.after else None,
        }
        return Response(ItemPageSerializer(answer).data)


class ItemDetailView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("kind", enum=list(selectors.KINDS), default="perturbations")],
        responses=ItemDetailSerializer,
    )
    def get(self, request: Request, slug: str, pk: int) -> Response:
        project, mine = selectors.reader(request.user, slug)
        kind = request.query_params.get("kind") or "perturbations"
        story = history.story_of(project, kind, pk, mine)
        answer = {"record": story.record, "history": [e.as_dict() for e in story.events]}
        return Response(ItemDetailSerializer(answer).data)


class BulkView(APIView):
    @extend_schema(request=BulkSerializer, responses=BulkResultSerializer)
    def post(self, request: Request, slug: str) -> Response:
        project = project_for(request.user, slug, Role.ADMIN)
        data = BulkSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        outcome = actions.bulk(
            project=project,
            actor=request.user,
            action=values.pop("action"),
            kind=values.pop("kind"),
            ids=values.pop("ids", None),
            filters=values.pop("filters", None),
            expected=values.pop("expected", None),
            options=values,
        )
        answer = {"done": outcome.done, "left": outcome.left, "details": outcome.details}
        return Response(BulkResultSerializer(answer).data)


class BatchView(APIView):
    @extend_schema(
        request=None,
        responses={
            200: RemovalSerializer,
            409: OpenApiResponse(description="a published release holds some of it: the reason"),
        },
    )
    def delete(self, request: Request, slug: str, pk: int) -> Response:
        """Undo the import batch `pk` (the `batch` an import's answer names): its originals,
        perturbations, items and votes; 409, with the reason, when a published release holds
        any of it."""
        project = project_for(request.user, slug, Role.ADMIN)
        batch = get_object_or_404(ImportBatch, project=project, pk=pk)
        done = removal.batch_undo(batch=batch, actor=request.user)
        return Response(RemovalSerializer(done.summary()).data)


class AuditView(APIView):
    @extend_schema(responses=page_of(AuditEntrySerializer))
    def get(self, request: Request, slug: str) -> Response:
        """The project's audit log, newest first."""
        project = project_for(request.user, slug, Role.ADMIN)
        log = project.audit_log.select_related("actor")
        return paginated(request, self, log, AuditEntrySerializer)


def project_delete_answer(request: Request, slug: str) -> Response:
    """DELETE /api/projects/{slug}/?confirm={slug}, for ProjectDetailView."""
    project = project_for(request.user, slug, Role.ADMIN)
    removal.project_delete(
        project=project, actor=request.user, confirm=request.query_params.get("confirm", "")
    )
    return Response(status=status.HTTP_204_NO_CONTENT)
