"""Every API list is paginated the same way: DRF's page numbers, PAGE_SIZE per page."""

from typing import Any

from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response


def paginated(request: Request, view: Any, rows: Any, serializer: Any) -> Response:
    """One page of `rows` (a queryset or a list) as {count, next, previous, results}."""
    paginator = PageNumberPagination()
    page: Any = paginator.paginate_queryset(rows, request, view=view)
    data = serializer(page, many=True).data if serializer is not None else page
    return paginator.get_paginated_response(data)
