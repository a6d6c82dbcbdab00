"""The Results table page: every model on every release of the projects an admin chooses,
its downloads (the API's), and "score the missing cells". 404 for users who administer no
project."""

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.errors import DomainError, flash_refusal
from annotation.models.config import SPLITS
from annotation.text.parsing import parse_id
from evaluation.access import admin_projects, require_some_admin
from evaluation.table.formats import STATUS_TEXT
from evaluation.table.selectors import (
    FIGURES,
    Cell,
    ResultsTable,
    TableQuery,
    results_table,
    table_query,
)
from evaluation.table.services import results_score_missing


def _query_string(query: TableQuery) -> str:
    return urlencode(
        {
            "projects": ",".join(p.slug for p in query.projects),
            "split": query.split,
            "by": query.by,
            "releases": query.releases,
            **({} if query.intervals else {"intervals": "0"}),
        }
    )


def _params(request: HttpRequest) -> dict[str, str]:
    """The page's form sends each chosen project as its own `projects` value."""
    values = request.POST if request.method == "POST" else request.GET
    keys = ("split", "by", "releases", "intervals")
    params = {key: values[key] for key in keys if values.get(key)}
    if values.getlist("projects"):  # none ticked: every project, as with none named
        params["projects"] = ",".join(values.getlist("projects"))
    return params


def _group(model: str, cell: Cell, keys: list[str]) -> tuple[str, Cell, list[Any], str]:
    note = "" if cell.figures else STATUS_TEXT.get(cell.status, "")
    return model, cell, [cell.figures.get(key) for key in keys], note


def grid(table: ResultsTable) -> list[dict[str, Any]]:
    """Each row's cells as the page lays them out: per model, its figures in the table's
    order, and what a cell without figures says instead."""
    return [
        {
            "row": row,
            "groups": [_group(m, row.cells[m], table.figures) for m in table.models],
        }
        for row in table.rows
    ]


@login_required
def results_page(request: HttpRequest) -> HttpResponse:
    require_some_admin(request.user)
    administered = admin_projects(request.user)
    try:
        query = table_query(request.user, _params(request), administered)
    except DomainError as error:
        if error.code == "not_found":
            raise Http404(error.message) from error
        flash_refusal(request, error)
        query = table_query(request.user, {}, administered)
    table = results_table(query)
    chosen = {p.slug for p in query.projects}
    context = {
        "table": table,
        "projects": [(p, p.slug in chosen) for p in administered],
        "splits": SPLITS,
        "headings": [(key, FIGURES[key][0]) for key in table.figures],
        "grid": grid(table),
        "download": f"{reverse('api-results')}?{_query_string(query)}",
    }
    return render(request, "evaluation/results_table.html", context)


@login_required
@require_POST
def results_score(request: HttpRequest) -> HttpResponse:
    require_some_admin(request.user)
    params = _params(request)
    try:
        query = table_query(request.user, params, admin_projects(request.user))
        shards = parse_id(request.POST.get("shards") or "1")
        if shards is None:
            raise DomainError("Shards must be a whole number from 1 to 64.")
        queued, refused = results_score_missing(query=query, user=request.user, shards=shards)
    except DomainError as error:
        if error.code == "not_found":
            raise Http404(error.message) from error
        flash_refusal(request, error)
        return redirect("results")
    messages.success(request, f"Queued {len(queued)} run{'s' if len(queued) != 1 else ''}.")
    for cell in refused:
        messages.warning(request, f"{cell.model} on {cell.project} {cell.version}: {cell.reason}")
    return redirect(f"{reverse('results')}?{_query_string(query)}")
