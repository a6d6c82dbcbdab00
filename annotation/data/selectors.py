"""What a project holds, as the Data page and GET /api/projects/{slug}/items/ list it: originals
and perturbations, filtered, searched and paged by keyset (newest or oldest first, by id), so
that a page costs the same at the first row and the millionth (benchmarks/data_page.py)."""

import re
from dataclasses import dataclass, fields
from typing import Any

from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet, TextField, Value
from django.db.models.functions import Cast, Upper
from django.db.models.lookups import Contains

from annotation.errors import DomainError
from annotation.models import Example, Perturbation, Project
from annotation.models.config import SPLITS
from annotation.permissions import Role, project_for
from annotation.sql import count_within

JSON_ESCAPED = re.compile(r'["\\\x00-\x1f]')  # characters fields::text writes escaped

KINDS = ("perturbations", "originals")
ORDERS = ("newest", "oldest")
PAGE_SIZE = 50
MAX_PAGE_SIZE = 500


@dataclass(frozen=True)
class Filters:
    """A list's filters, read from a query string; each empty one leaves the list alone."""

    kind: str = "perturbations"
    status: str = ""
    split: str = ""
    tag: str = ""
    author: str = ""
    label: str = ""
    batch: int | None = None
    q: str = ""
    warnings: bool = False  # from an import that has warnings
    waiting: bool = False  # originals that wait for an answer
    order: str = "newest"

    @classmethod
    def parse(cls, query: Any) -> "Filters":
        """The filters of `query` (a QueryDict or dict), each checked: a bad value is an error
        that names it, never an empty list."""
        kind = query.get("kind") or "perturbations"
        if kind not in KINDS:
            raise DomainError(f"kind is one of {', '.join(KINDS)}.", field="kind")
        status = query.get("status") or ""
        if status and status not in Perturbation.Status.values:
            raise DomainError(
                f"status is one of {', '.join(Perturbation.Status.values)}.", field="status"
            )
        split = query.get("split") or ""
        if split and split not in SPLITS:
            raise DomainError(f"split is one of {', '.join(SPLITS)}.", field="split")
        order = query.get("order") or "newest"
        if order not in ORDERS:
            raise DomainError("order is newest or oldest.", field="order")
        return cls(
            kind=kind,
            status=status,
            split=split,
            tag=(query.get("tag") or "").strip(),
            author=(query.get("author") or "").strip(),
            label=(query.get("label") or "").strip(),
            batch=_whole(query.get("batch"), "batch"),
            q=(query.get("q") or "").strip()[:200],
            warnings=_flag(query.get("warnings"), "warnings"),
            waiting=_flag(query.get("waiting"), "waiting"),
            order=order,
        )

    def query(self, **changes: Any) -> dict[str, Any]:
        """These filters as query parameters (the ones set), with `changes`."""
        values = {f.name: getattr(self, f.name) for f in fields(self)} | changes
        defaults = {"kind": "perturbations", "order": "newest"}
        return {
            k: ("1" if v is True else v)
            for k, v in values.items()
            if v not in ("", None, False) and defaults.get(k) != v
        }


def reader(user: Any, slug: str) -> tuple[Project, Any]:
    """The project, for its admins and experts, and the author whose own work is all the user
    may see: None for admins, who see everything."""
    project = project_for(user, slug, Role.ADMIN, Role.EXPERT)
    return project, None if Role.ADMIN in project.user_roles else user  # type: ignore[attr-defined]


def _flag(value: Any, name: str) -> bool:
    """A yes/no filter: true or 1 sets it; false, 0 or nothing leaves it off."""
    if value in (None, "", "0", "false"):
        return False
    if value in ("1", "true"):
        return True
    raise DomainError(f"{name} is true or false.", field=name)


def _whole(value: Any, name: str) -> int | None:
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = -1
    if number < 1 or number > 2**63 - 1:
        raise DomainError(f"{name} is a positive whole number.", field=name)
    return number


def rows(
    project: Project, filters: Filters, *, author: Any = None
) -> "QuerySet[Perturbation] | QuerySet[Example]":
    """Every row the filters let through, in their order; `author` limits perturbations to
    one user's own (what an expert may see) and originals to those they perturbed, and every
    filter reads only those: an expert's counts never tell another author's work apart. A
    filter that names nothing of the project (an import, a label, an author) is an error that
    says so, not an empty list; for an expert, another author is nothing, whoever it is."""
    visible = visible_perturbations(project, author)
    _check_names(project, filters, visible)
    if filters.kind == "originals":
        return _originals(project, filters, visible, narrowed=author is not None)
    return _perturbations(project, filters, visible)


def visible_perturbations(project: Project, author: Any) -> "QuerySet[Perturbation]":
    """The perturbations a reader may see: all (admins, `author` None), or the author's own."""
    qs = Perturbation.objects.filter(project=project)
    return qs if author is None else qs.filter(author=author)


def _perturbations(
    project: Project, f: Filters, qs: "QuerySet[Perturbation]"
) -> "QuerySet[Perturbation]":
    if f.status:
        qs = qs.filter(status=f.status)
    if f.split:
        qs = qs.filter(pivot__split=f.split)
    if f.tag:
        # Exists, row by row in id order: a join walked the whole tag table of every project
        tagged = Perturbation.tags.through.objects.filter(
            perturbation_id=OuterRef("pk"), tag_id=_tag_id(project, f.tag)
        )
        qs = qs.filter(Exists(tagged))
    if f.author:
        qs = qs.filter(author__username=f.author)
    return _shared(project, f, qs, "pivot__")


def _originals(
    project: Project, f: Filters, visible: "QuerySet[Perturbation]", *, narrowed: bool
) -> "QuerySet[Example]":
    """Originals; `narrowed`: only those under a `visible` perturbation. Each filter on the
    perturbations under an original reads the visible ones only."""
    qs = Example.objects.filter(project=project)
    if narrowed:
        qs = qs.filter(pk__in=visible.values("pivot_id"))
    if f.status:
        qs = qs.filter(pk__in=visible.filter(status=f.status).values("pivot_id"))
    if f.split:
        qs = qs.filter(split=f.split)
    if f.tag:
        tagged = visible.filter(pivot_id=OuterRef("pk"), tags__id=_tag_id(project, f.tag))
        qs = qs.filter(Exists(tagged))
    if f.author:
        qs = qs.filter(pk__in=visible.filter(author__username=f.author).values("pivot_id"))
    return _shared(project, f, qs, "")


def _shared(project: Project, f: Filters, qs: QuerySet[Any], original: str) -> QuerySet[Any]:
    """The filters both kinds read alike, and the order; `original` leads from a row to its
    original ("pivot__" for a perturbation, "" for an original)."""
    if f.label:
        qs = qs.filter(label=f.label)
    if f.batch:
        qs = qs.filter(batch_id=f.batch)
    if f.warnings:
        qs = qs.filter(batch__isnull=False).exclude(batch__warnings=[])
    if f.waiting:
        qs = qs.filter(**{f"{original}label": "", f"{original}answers": []})
    if f.q:
        qs = qs.filter(_search(project, f.q, original, qs.model))
    return qs.order_by("id" if f.order == "oldest" else "-id")


def _check_names(project: Project, f: Filters, visible: "QuerySet[Perturbation]") -> None:
    if f.batch and not project.import_batches.filter(pk=f.batch).exists():
        raise DomainError(f"this project has no import {f.batch}.", field="batch")
    if f.label and f.label not in project.all_labels:
        raise DomainError(
            f"label {f.label!r} is none of the project's ({', '.join(project.all_labels)}).",
            field="label",
        )
    # Among what the reader sees: no account is revealed, nor, to an expert, another author
    if f.author and not visible.filter(author__username=f.author).exists():
        raise DomainError(f"no perturbation of this project is by {f.author!r}.", field="author")


def _tag_id(project: Project, name: str) -> int:
    tag = project.tags.filter(name=name).values_list("pk", flat=True).first()
    if tag is None:
        raise DomainError(f"tag {name!r} is none of the project's tags.", field="tag")
    return tag


def _search(project: Project, q: str, original: str, model: Any) -> Q:
    """`q` in any of the row's text fields, or the original's id exactly (`original` leads
    from a row to its original, as in `_shared`). On PostgreSQL, a `q` of three characters or
    more is looked for in the fields as upper-case text, which a trigram index covers
    (migrations 0023, 0024), and then in each field: the planner reads a rare text's rows from
    the index, and a common one's newest rows first (1M rows scanned took 0.9-1.2 s:
    benchmarks/data_page.py). It has no statistics of each field's check, so it can take a
    common text for a rare one and read every match: page_of reads a window first
    (_searched). The index holds the searchable rows only:
    those an import wrote a moment ago, before a worker indexed them
    (annotation.data.services.search_index), come from their own small index and are read
    field by field, so that the search never misses a row. A `q` that JSON writes escaped (a
    quote, a backslash, a control character) is not found as typed in that text: it scans, as
    on SQLite."""
    in_fields = Q()
    for name in project.field_names:
        in_fields |= Q(**{f"fields__{name}__icontains": q})
    by_id = Q(**{f"{original}external_id": q})
    if connection.vendor != "postgresql" or len(q) < 3 or JSON_ESCAPED.search(q):
        return in_fields | by_id
    # The rows of an original of that id, by their ids: the planner then reads both indexes.
    # The original's project too, so that its (project, external_id) index finds it: without
    # it a perturbation's original was looked for in every project's (a scan, 70 ms at 1M).
    scope = {"project": project, f"{original}project": project}  # one key for an original
    ids = list(model.objects.filter(by_id, **scope).order_by().values_list("pk", flat=True))
    in_text = Contains(Upper(Cast("fields", TextField())), Upper(Value(q)))
    indexed = Q(in_text, searchable=True) & in_fields
    return Q(pk__in=ids) | indexed | (Q(searchable=False) & in_fields)


@dataclass
class Page:
    rows: list[Any]
    after: int | None  # the cursor of the next page, None on the last


def page_of(
    qs: QuerySet[Any],
    filters: Filters,
    after: Any,
    size: Any = None,
    project: Project | None = None,
) -> Page:
    """One page of `qs` (the rows of `project`) after the row with id `after` (keyset
    pagination)."""
    cursor = _whole(after, "after")
    limit = min(_whole(size, "size") or PAGE_SIZE, MAX_PAGE_SIZE)
    oldest = filters.order == "oldest"
    if cursor is not None:
        qs = qs.filter(pk__gt=cursor) if oldest else qs.filter(pk__lt=cursor)
    if filters.q and project is not None and connection.vendor == "postgresql":
        got = _searched(qs, project, oldest, cursor, limit + 1)
    else:
        got = list(qs[: limit + 1])
    more = len(got) > limit
    got = got[:limit]
    return Page(got, got[-1].pk if more and got else None)


SEARCH_WINDOW = 50_000  # ids a text search reads first, from where its page starts


def _searched(
    qs: QuerySet[Any], project: Project, oldest: bool, cursor: int | None, n: int
) -> list[Any]:
    """The first `n` rows of a text search: those among the next SEARCH_WINDOW ids first, then
    the rest. PostgreSQL cannot estimate how many rows a text is in (each field's own check has
    no statistics), and took a text in a tenth of 1M rows for a rare one: it read all 100k of
    them by the trigram index to sort them, 0.9 s a page. Within a window it reads the ids in
    order; a rare text costs a second query, about 20 ms (benchmarks/search_index.py)."""
    start = cursor
    if start is None:  # the project's first row in this order
        ids = qs.model.objects.filter(project=project).values_list("pk", flat=True)
        start = ids.order_by("pk" if oldest else "-pk").first()
        if start is None:
            return []
    bound = start + SEARCH_WINDOW if oldest else start - SEARCH_WINDOW
    near = qs.filter(pk__lte=bound) if oldest else qs.filter(pk__gte=bound)
    got = list(near[:n])
    if len(got) < n:
        far = qs.filter(pk__gt=bound) if oldest else qs.filter(pk__lt=bound)
        got += list(far[: n - len(got)])
    return got


COUNT_MS = 150  # PostgreSQL's time for a count; past it, the page says "50+"


def count_upto(
    qs: QuerySet[Any], filters: Filters, page: Page, cap: int = 10_000
) -> tuple[int, bool]:
    """How many rows match, counted up to `cap` and for COUNT_MS at most (a rare combination
    of filters reads every row to count it): (count, True when there may be more). A text
    search reads every row's text, so its count is the page's (benchmarks/data_page.py)."""
    if filters.q:
        return len(page.rows), page.after is not None
    n = count_within(qs.order_by().values("pk")[: cap + 1], COUNT_MS)
    if n is None:  # the count ran out of time: the page's rows, at least
        return len(page.rows), page.after is not None
    return min(n, cap), n > cap
