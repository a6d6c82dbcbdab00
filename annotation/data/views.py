"""The Data page (every original and perturbation of a project, filtered and paged), one row's
page with its history, bulk actions, the undo of an import, the deletion of a project, and the
audit log (docs/data.md)."""

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, QueryDict, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.comments import selectors as comment_selectors
from annotation.data import history, records, selectors
from annotation.data.audit import audit_rows, details_in_words
from annotation.data.services import actions, removal
from annotation.downloads import checked_format, download
from annotation.errors import DomainError, flash_refusal
from annotation.models import Example, ImportBatch, Perturbation
from annotation.models.config import SPLITS
from annotation.permissions import Role, project_for


@login_required
def data_page(request: HttpRequest, slug: str) -> HttpResponse:
    project, mine = selectors.reader(request.user, slug)
    try:
        filters = selectors.Filters.parse(request.GET)
        qs = selectors.rows(project, filters, author=mine)
        page = selectors.page_of(
            records.with_relations(filters.kind, qs, mine),
            filters,
            request.GET.get("after"),
            project=project,
        )
    except DomainError as error:
        status = flash_refusal(request, error)
        return render(
            request, "annotation/data.html", {"project": project, "broken": True}, status=status
        )
    total, more = selectors.count_upto(qs, filters, page)
    context = {
        "project": project,
        "filters": filters,
        "rows": records.records(filters.kind, page.rows),
        "total": total,
        "more": more,
        "splits": SPLITS,
        "statuses": [(s, s) for s in Perturbation.Status.values],  # as the badges and API say
        "tags": project.tags.values_list("name", flat=True),
        "may_act": mine is None,
        "batches": project.import_batches.values_list("pk", "source_name")[:200],
        "next": urlencode(filters.query(after=page.after)) if page.after else "",
        "first": urlencode(filters.query()) if request.GET.get("after") else "",
        "this": urlencode(filters.query(after=request.GET.get("after") or "")),
        "matching": urlencode(filters.query()),  # what "all N that match" acts on
    }
    return render(request, "annotation/data.html", context)


@login_required
def item_page(request: HttpRequest, slug: str, kind: str, pk: int) -> HttpResponse:
    project, mine = selectors.reader(request.user, slug)
    story = history.story_of(project, kind, pk, mine)
    # Back to the list as it was filtered (the list's own query, passed along)
    back = request.GET.get("back") or urlencode({"kind": kind})
    context = {
        "project": project,
        "kind": kind,
        "story": story,
        "row": story.row,
        "record": story.record,
        "may_act": mine is None,
        "back": back,
        "thread": _thread(request, project, kind, story.row),
    }
    return render(request, "annotation/data_item.html", context)


def _thread(request: HttpRequest, project: Any, kind: str, row: Any) -> dict[str, Any] | None:
    """A perturbation's comments (docs/workflows.md, "Comments"); an original has none."""
    if kind != "perturbations":
        return None
    row.project = project
    return comment_selectors.thread_context(request.user, row, request.get_full_path())


@login_required
@require_POST
def bulk_action(request: HttpRequest, slug: str) -> HttpResponse | StreamingHttpResponse:
    """A bulk action on the rows ticked on the Data page, or on every row that matches its
    filters (scope "matching"); a delete asks first, with its counts; export sends the
    selection as a file."""
    project = project_for(request.user, slug, Role.ADMIN)
    back = f"{redirect('data', slug=slug).url}?{request.POST.get('back', '')}"
    kind = request.POST.get("kind", "perturbations")
    action = request.POST.get("action", "")
    matching = request.POST.get("scope") == "matching"
    filters = QueryDict(request.POST.get("filters", "")).dict() if matching else None
    try:
        if matching:
            ids = actions.matching_ids(project, kind, filters)
        else:
            ids = [_id for _id in (_int(v) for v in request.POST.getlist("ids")) if _id]
        if action == "export":
            chosen = ids if matching else actions.checked_ids(ids)
            return _export(project, kind, chosen, request.POST.get("format"))
        if action == "delete" and not request.POST.get("confirmed"):
            return _confirm_delete(request, project, kind, ids, filters)
        options: dict[str, Any] = {k: request.POST.get(k) for k in ("reason", "tag")}
        options["clear_votes"] = request.POST.get("clear_votes") == "1"
        outcome = actions.bulk(
            project=project,
            actor=request.user,
            action=action,
            kind=kind,
            ids=None if matching else ids,
            options=options,
            filters=filters,
            expected=request.POST.get("expected"),
        )
    except DomainError as error:
        flash_refusal(request, error)
        return redirect(back)
    said = f"{action.replace('_', ' ').capitalize()}: {outcome.done} done."
    if outcome.left:
        said += " Left alone: " + "; ".join(f"{n} {why}" for why, n in outcome.left.items()) + "."
    kept = outcome.details.get("kept")
    if kept:
        said += " Kept for releases: " + ", ".join(f"{n} in {v}" for v, n in kept.items()) + "."
    (messages.warning if outcome.left or kept else messages.success)(request, said)
    return redirect(back)


def _confirm_delete(
    request: HttpRequest, project: Any, kind: str, ids: list[int], filters: Any
) -> HttpResponse:
    """The page that counts what a delete takes away, before it does."""
    matching = filters is not None
    key = "originals" if kind == "originals" else "perturbations"
    model = Example if kind == "originals" else Perturbation
    chosen: Any = model.objects.filter(pk__in=ids if matching else actions.checked_ids(ids))
    noun = kind if len(ids) != 1 else kind[:-1]
    context = {
        "project": project,
        "plan": removal.plan(project, **{key: chosen}),
        "ids": [] if matching else ids,
        "kind": kind,
        "back": request.POST.get("back", ""),
        "matching": matching,
        "filters": urlencode(filters) if matching else "",
        "expected": len(ids),
        "shown_filters": _readable(filters) if matching else [],
        "what": _what(len(ids), noun, matching),
    }
    return render(request, "annotation/data_confirm.html", context)


def _what(count: int, noun: str, matching: bool) -> str:
    if not matching:
        return f"{count} selected {noun}"
    return f"the 1 {noun} that matches" if count == 1 else f"all {count} {noun} that match"


def _readable(filters: dict[str, str]) -> list[tuple[str, str]]:
    """The filters a delete acts on, as the page names them ("status", "submitted"); the kind
    is in the title already, and the order or the page change nothing."""
    skip = {"kind", "after", "order"}
    return [("text" if k == "q" else k, v) for k, v in filters.items() if v and k not in skip]


def _int(value: str) -> int | None:
    # "²".isdigit() is true, and int() refuses it: only ASCII digits are an id
    return int(value) if value.isascii() and value.isdigit() and len(value) < 19 else None


def _export(project: Any, kind: str, ids: list[int], fmt: Any) -> StreamingHttpResponse:
    model: Any = Example if kind == "originals" else Perturbation
    qs = records.with_relations(kind, model.objects.filter(project=project, pk__in=ids))
    rows = records.records(kind, list(qs.order_by("-pk")))  # as the page lists them
    fmt = checked_format(fmt)
    if fmt == "csv":  # a column per field, and tags as words, as a spreadsheet reads them
        rows = [records.flat(row) for row in rows]
    return download(rows, fmt, f"{project.slug}-{kind}-selection")


@login_required
def batch_undo(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Undo an import: a page that counts what goes, then the undo itself."""
    project = project_for(request.user, slug, Role.ADMIN)
    batch = get_object_or_404(ImportBatch, project=project, pk=pk)
    if request.method == "POST":
        try:
            done = removal.batch_undo(batch=batch, actor=request.user)
        except DomainError as error:
            flash_refusal(request, error)
            return redirect("batch-undo", slug=slug, pk=pk)
        c = done.counts
        messages.success(
            request,
            f"Undid the import of {batch.source_name}: removed "
            f"{c['originals']} originals, {c['perturbations']} perturbations, "
            f"{c['items']} validation items and {c['votes']} votes.",
        )
        return redirect("project-import", slug=slug)
    context = {
        "project": project,
        "plan": removal.batch_plan(batch),
        "batch": batch,
        "what": f"the import of {batch.source_name}",
    }
    return render(request, "annotation/data_confirm.html", context)


@login_required
@require_POST
def project_delete(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    try:
        removal.project_delete(
            project=project, actor=request.user, confirm=request.POST.get("confirm", "")
        )
    except DomainError as error:
        flash_refusal(request, error)
        return redirect("project-settings", slug=slug)
    messages.success(request, f"Deleted the project {project.name} ({slug}).")
    return redirect("project-list")


@login_required
def audit_page(request: HttpRequest, slug: str) -> HttpResponse | StreamingHttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    if request.GET.get("format"):
        try:
            fmt = checked_format(request.GET["format"])
        except DomainError as error:
            return HttpResponse(error.message, status=400, content_type="text/plain")
        return download(audit_rows(project), fmt, f"{project.slug}-audit")
    log = project.audit_log.select_related("actor")
    page = Paginator(log, 50).get_page(request.GET.get("page"))
    # (entry, its details in words): a detail may be named "items", as dict methods are
    rows = [(entry, details_in_words(entry.details)) for entry in page]
    context = {"project": project, "page": page, "rows": rows, "query": ""}
    return render(request, "annotation/audit.html", context)
