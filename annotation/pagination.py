"""Every API list is paginated the same way: DRF's page numbers, PAGE_SIZE per page; and the
pages' long tables too (table_page)."""

import re
from typing import Any

from django.core.paginator import Paginator
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


def table_page(
    request: Any,
    rows: list[dict[str, Any]],
    sorts: tuple[str, ...],
    search: tuple[str, ...],
    per_page: int = 50,
) -> dict[str, Any]:
    """A page's table of `rows`: searched (?q= in the `search` keys), sorted by a key of
    `sorts` (?sort=key, or -key for descending; numbers as numbers, blanks last), paginated.
    The context the table and _pager.html need: page, query, sort, q."""
    q = request.GET.get("q", "").strip()
    if q:
        rows = [r for r in rows if any(q.lower() in str(r.get(k) or "").lower() for k in search)]
    sort = request.GET.get("sort", sorts[0])
    key = sort.removeprefix("-")
    if key not in sorts:
        sort, key = sorts[0], sorts[0]
    present = [r for r in rows if r.get(key) is not None]
    present.sort(key=lambda r: _natural(r[key]), reverse=sort.startswith("-"))
    rows = present + [r for r in rows if r.get(key) is None]
    page = Paginator(rows, per_page).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return {"page": page, "query": query.urlencode(), "sort": sort, "q": q}


def _natural(value: Any) -> Any:
    """Texts with numbers in them sort as people expect: w2 before w10."""
    if not isinstance(value, str):
        return value
    return [
        (0, int(part), "") if part.isascii() and part.isdigit() else (1, 0, part)
        for part in re.split(r"(\d+)", value.lower())
        if part
    ]
