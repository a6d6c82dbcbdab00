"""The published contrast sets' import page (docs/published/): into a new project made from a
dataset's template, or into a project that fits."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from annotation.errors import DomainError, ImportRejected
from annotation.imports.background import import_or_queue
from annotation.imports.forms import PublishedImportForm
from annotation.imports.published.datasets import DATASETS, MOST_FILES
from annotation.imports.published.services import PUBLISHED_FILES
from annotation.imports.services.running import import_now
from annotation.models import ImportJob, Project
from annotation.permissions import Role, check_may_create_projects, project_for

PUBLISHED_WARNINGS = "published-import-warnings"


@login_required
def published_import_page(request: HttpRequest, slug: str = "") -> HttpResponse:
    """A published contrast set in one step (docs/published/): into a new project made from
    the dataset's template (no slug: New project), or into this project if it fits."""
    project = _published_target(request, slug)
    fits = [d.key for d in DATASETS.values() if project and d.fits(project)]
    form = PublishedImportForm(
        request.POST or None,
        request.FILES or None,
        new_project=project is None,
        initial={"dataset": fits[0] if fits else "imdb"},
    )
    errors: list[Any] = []
    taken = ""
    if request.method == "POST" and form.is_valid():
        try:
            return _published_import(request, form.cleaned_data, project)
        except ImportRejected as rejected:
            errors = rejected.errors
        except DomainError as error:  # a slug taken names the project, to import into it
            taken = form.cleaned_data.get("slug") or form.cleaned_data["dataset"]
            form.add_error(error.field if error.field in ("slug", "name") else None, error.message)
    warnings, warned = _published_warnings(request, project)
    context = {
        "project": project,
        "form": form,
        "errors": errors,
        "warnings": warnings,
        "warned": warned,
        "datasets": DATASETS.values(),
        "fits": fits,
        "taken": taken if form.has_error("slug") else "",
        "most_files": {key: MOST_FILES.get(key, 1) for key in DATASETS},
    }
    return render(
        request, "annotation/published_import.html", context, status=400 if errors else 200
    )


def _published_target(request: HttpRequest, slug: str) -> Project | None:
    """This project, for its admins; or None, a new project, for those who may create one."""
    if slug:
        return project_for(request.user, slug, Role.ADMIN)
    check_may_create_projects(request.user)
    return None


def _published_import(
    request: HttpRequest, values: dict[str, Any], project: Project | None
) -> HttpResponse:
    """The import, its summary and notes as messages, then the project's dashboard; or, with
    warnings, its own import page, where they show once (post, then get). Into a project
    that exists, large files go to a worker, as every import's do: then the job's page."""
    accept = not values["to_validation"]
    files = {name: values[name] for name in PUBLISHED_FILES if values.get(name)}
    options: dict[str, Any] = {"dataset": values["dataset"], "accept": accept}
    if project is None:
        options |= {"slug": values.get("slug") or "", "name": values.get("name") or ""}
        answer = import_now(
            project=None,
            user=request.user,
            kind=ImportJob.Kind.PUBLISHED,
            files=files,
            options=options,
        )
    else:
        job, answer = import_or_queue(
            project=project,
            user=request.user,
            kind=ImportJob.Kind.PUBLISHED,
            files=files,
            options=options,
        )
        if job is not None:
            return redirect("import-job", slug=project.slug, pk=job.pk)
    messages.success(request, answer["summary"])
    for note in answer["notes"]:
        messages.info(request, note)
    if not answer["warnings"]:
        return redirect("project-dashboard", slug=answer["project"])
    request.session[PUBLISHED_WARNINGS] = {
        "batch": answer["batch"],
        "total": answer["warning_count"],
        "warnings": answer["warnings"],
    }
    return redirect("published-import", slug=answer["project"])


def _published_warnings(
    request: HttpRequest, project: Project | None
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The last import's warnings, grouped, and {"batch", "total"}: shown once, on a GET of
    the project's own page."""
    if request.method == "POST" or project is None:
        return [], None
    shown = request.session.pop(PUBLISHED_WARNINGS, None)
    if not shown:
        return [], None
    return shown.pop("warnings"), shown  # set_checks.Counted rows, as dicts
