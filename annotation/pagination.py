"""Every API list is paginated the same way: DRF's page numbers, PAGE_SIZE per page."""

from typing import Any

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response


def paginated(
    request: Request, view: Any, rows: Any, serializer: Any, context: Any = None
) -> Response:
    """One page of `rows` (a queryset or a list) as {count, next, previous, results}."""
    paginator = PageNumberPagination()
    page: Any = paginator.paginate_queryset(rows, request, view=view)
    data = serializer(page, many=True, context=context or {}).data if serializer else page
    return paginator.get_paginated_response(data)


def page_of(serializer: Any) -> Any:
    """The OpenAPI shape of one page of `serializer` rows, for extend_schema(responses=...)."""
    return inline_serializer(
        name=f"{serializer.__name__.removesuffix('Serializer')}Page",
        fields={
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": serializer(many=True),
        },
    )
