"""Import pages: originals, existing contrast sets, votes, and the status of a large import
(published contrast sets: annotation/imports/published/views.py)."""

import json
import re
from pathlib import Path
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Exists, Func, IntegerField, OuterRef
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from annotation.downloads import download
from annotation.errors import DomainError, ImportRejected
from annotation.imports import preview
from annotation.imports.background import JOB_ACTIONS, import_or_queue
from annotation.imports.forms import (
    ImportForm,
    SetImportForm,
    VoteImportForm,
)
from annotation.jobs.pages import JobPages
from annotation.models import Example, ImportBatch, ImportJob, Perturbation, Project
from annotation.permissions import Role, project_for


@login_required
def import_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Originals in two steps: upload, then a preview with the columns and label values chosen
    from the file's own (preview.py), then the import itself."""
    project = project_for(request.user, slug, Role.ADMIN)
    form = ImportForm(request.POST or None, request.FILES or None)
    errors: list[Any] = []
    shown = None
    token = request.POST.get("upload", "")
    if request.method == "POST" and form.is_valid():
        options = form.cleaned_data
        try:
            mapping: dict[str, str] | None = None
            labels: dict[str, str] = {}
            if options["file"]:
                token = preview.stage(project, request.user, {"file": options["file"]})
            else:
                mapping, labels = chosen_mapping(request.POST, preview.targets(project), project)
            stored = preview.staged(project, request.user, token)
            if request.POST.get("action") == "import" and mapping is not None:
                try:
                    return _commit(request, project, token, stored, options, mapping, labels)
                except ImportRejected as rejected:  # shown beside the file, as it was chosen
                    errors = rejected.errors
            shown = preview.preview(
                project, stored, options["format"] or None, mapping, labels, options["split"]
            )
        except ImportRejected as rejected:  # a file the preview cannot read
            errors = rejected.errors
        except DomainError as error:
            form.add_error(None, error.message)
    batches = _with_added(project.import_batches.select_related("created_by"))[:20]
    context = {
        "project": project,
        "form": form,
        "errors": errors,
        "batches": batches,
        "preview": shown,
        "token": token if shown else "",
        "targets": preview.targets(project),
        "labels": project.labels,
    }
    return render(request, "annotation/import.html", context, status=400 if errors else 200)


class JSONLength(Func):
    """The length of a JSON array column, counted by the database."""

    function = "jsonb_array_length"
    output_field = IntegerField()

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, function="json_array_length", **extra)


def _with_added(batches: Any) -> Any:
    """Each batch with `added`: whether it holds an original or a perturbation (an import of
    what was already here adds nothing: its row says so, and offers no undo of nothing), and
    its counts of warnings and skipped lines, counted without reading them."""
    here = OuterRef("pk")
    return batches.defer(*ImportBatch.BULKY).annotate(
        added_originals=Exists(Example.objects.filter(batch=here)),
        added_perturbations=Exists(Perturbation.objects.filter(batch=here)),
        n_warnings=JSONLength("warnings"),
        n_skipped=JSONLength("skipped"),
    )


def chosen_mapping(
    post: Any, targets: list[tuple[str, bool]], project: Any
) -> tuple[dict[str, str], dict[str, str]]:
    """The preview's choices: each target's column, and each label value's label."""
    mapping = {target: post.get(f"map_{target}", "") for target, _ in targets}
    labels = {}
    for key, value in post.items():
        if key.startswith("value_") and post.get(f"label_{key[6:]}") in project.labels:
            labels[value] = post[f"label_{key[6:]}"]
    return mapping, labels


def _commit(
    request: HttpRequest,
    project: Any,
    token: str,
    stored: dict[str, Any],
    options: dict[str, Any],
    mapping: dict[str, str],
    labels: dict[str, str],
) -> HttpResponse:
    """The import itself, with the preview's choices; the staged upload goes when it is done."""
    values = {
        "fmt": options["format"] or None,
        "default_split": options["split"],
        "mapping": {t: c for t, c in mapping.items() if c},
        "labels": labels,
        "skip_bad": options["skip_bad"],
    }
    files = preview.as_files(stored)
    job, result = import_or_queue(
        project=project,
        user=request.user,
        kind=ImportJob.Kind.ORIGINALS,
        files=files,
        options=values,
    )
    preview.discard(token)
    if job is not None:
        return redirect("import-job", slug=project.slug, pk=job.pk)
    said = f"Imported {result['imported']} examples from {files['file'].name}."
    if result["skipped"]:
        n = result["skipped"]
        said += f" {n} bad {'line was' if n == 1 else 'lines were'} skipped: see Earlier imports."
        messages.warning(request, said)
    else:
        messages.success(request, said)
    return redirect("project-import", slug=project.slug)


@login_required
def skipped_lines(request: HttpRequest, slug: str, pk: int) -> StreamingHttpResponse:
    """The lines an import skipped, with their problems, as CSV."""
    project = project_for(request.user, slug, Role.ADMIN)
    batch = get_object_or_404(ImportBatch, project=project, pk=pk)
    name = f"{Path(batch.source_name).stem}-skipped"
    return download(iter(batch.skipped), "csv", name)


@login_required
def import_warnings(
    request: HttpRequest, slug: str, pk: int
) -> HttpResponse | StreamingHttpResponse:
    """Every warning of a set import, ungrouped: on a page, or as CSV (file, line, the
    dataset's id, message)."""
    project = project_for(request.user, slug, Role.ADMIN)
    batch = get_object_or_404(ImportBatch, project=project, pk=pk)
    if request.GET.get("format") == "csv":
        rows = (
            {
                "file": _file_of(w, batch.source_name),
                "line": w["line"] or "whole file",
                "id": w.get("id", ""),
                "message": w["message"],
            }
            for w in batch.warnings
        )
        return download(rows, "csv", f"{Path(batch.source_name).stem}-warnings")
    shown = [_shown({**w, "file": _file_of(w, batch.source_name)}) for w in batch.warnings]
    files = {w["file"] for w in shown}
    context = {
        "project": project,
        "batch": batch,
        "rows": shown,
        # No File column unless the warnings' lines are in several files; the page names one.
        "one_file": len(files) <= 1,
        "lines_in": files.pop() if len(files) == 1 else "",
    }
    return render(request, "annotation/import_warnings.html", context)


def _file_of(warning: dict[str, Any], source_name: str) -> str:
    """The one file a warning's line is in: an import of several files (Quoref's two) stores
    them all as its file, and its message begins with the one it is about ("b.json line 12: ")."""
    names = source_name.split(", ")
    if warning["file"] == source_name and len(names) > 1:
        for name in names:
            if warning["message"].startswith(f"{name} line "):
                return name
    return str(warning["file"])


def _shown(warning: dict[str, Any]) -> dict[str, Any]:
    """A stored warning as its page lists it: the place once, in the Line column, not again
    at the start of the message (the CSV keeps the message whole)."""
    line, message = warning["line"] or "whole file", warning["message"]
    at = re.match(rf"(?:.* line )?{re.escape(str(line))}: ", message)
    return {**warning, "line": line, "message": message[at.end() :] if at else message}


@login_required
def set_import_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Contrast sets in two steps, as originals: the files, then a preview of the first sets
    with the columns (paired TSV) and label values chosen from the files' own, then the
    import. Warnings come back grouped, on the page."""
    project = project_for(request.user, slug, Role.ADMIN)
    form = SetImportForm(request.POST or None, request.FILES or None)
    after: dict[str, Any] = {}  # the import's errors, or its warnings ("warnings", "warned")
    shown = None
    token = request.POST.get("upload", "")
    targets = preview.set_targets(project)
    if request.method == "POST" and form.is_valid():
        values = form.cleaned_data
        try:
            mapping: dict[str, str] | None = None
            labels: dict[str, str] = {}
            if form.uploads():
                token = preview.stage(project, request.user, form.uploads())
            else:
                mapping, labels = chosen_mapping(request.POST, targets, project)
            stored = preview.staged(project, request.user, token)
            if request.POST.get("action") == "import" and mapping is not None:
                done, after = _sets_import(request, project, token, stored, values, mapping, labels)
                if done is not None:
                    return done
                if "warnings" in after:  # imported: a fresh form, the warnings shown once
                    form, token = SetImportForm(), ""
            if token:
                shown = preview.set_preview(
                    project,
                    stored,
                    values["format"],
                    mapping,
                    labels,
                    values["split"],
                    values["tags"],
                )
        except DomainError as error:
            form.add_error(None, error.message)
    context = {
        "project": project,
        "form": form,
        "errors": after.get("errors", []),
        "warnings": after.get("warnings", []),
        "warned": after.get("warned"),
        "preview": shown,
        "token": token if shown else "",
        "targets": targets,
        "labels": project.labels,
        **_sets_example(project),
    }
    status = 400 if after.get("errors") else 200
    return render(request, "annotation/set_import.html", context, status=status)


def _sets_example(project: Project) -> dict[str, str]:
    """A line of sets.jsonl for this project, shown as the format's example."""
    first = json.dumps(project.labels[0]) if project.labels else ""
    return {
        "example_fields": json.dumps({name: "…" for name in project.field_names}),
        "example_truth": '"answers": ["…"]' if project.is_free_text else f'"label": {first}',
        "example_tags": json.dumps([t.name for t in project.tags.all()[:1]] or ["negation"]),
    }


def _sets_import(
    request: HttpRequest,
    project: Project,
    token: str,
    stored: dict[str, Any],
    values: dict[str, Any],
    mapping: dict[str, str],
    labels: dict[str, str],
) -> tuple[HttpResponse | None, dict[str, Any]]:
    """The previewed files imported with the choices: a redirect when done or queued; else
    what the page shows, the errors (nothing imported) or the warnings of what was."""
    chosen = ("format", "split", "strict", "tags", "author", "accept")
    columns = {target: column for target, column in mapping.items() if column}
    options = {key: values[key] for key in chosen} | {"mapping": columns, "labels": labels}
    try:
        job, result = import_or_queue(
            project=project,
            user=request.user,
            kind=ImportJob.Kind.SETS,
            files=preview.as_files(stored),
            options=options,
        )
    except ImportRejected as rejected:  # shown beside the files, as chosen
        return None, {"errors": rejected.errors}
    preview.discard(token)
    if job is not None:
        return redirect("import-job", slug=project.slug, pk=job.pk), {}
    skipped = result["already_present"]
    present = f"; {skipped} were already here" if skipped else ""
    messages.success(request, f"Imported {result['perturbations']} perturbations{present}.")
    if not result["warnings"]:
        return redirect("set-import", slug=project.slug), {}
    # Shown once, grouped and counted, on the page itself: no redirect.
    return None, {
        "warnings": result["warnings"],  # set_checks.Counted rows, as dicts
        "warned": {"batch": result["batch"], "total": result["warning_count"]},
    }


@login_required
def vote_import_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Validation responses collected elsewhere (docs/formats.md), for their statistics."""
    project = project_for(request.user, slug, Role.ADMIN)
    form = VoteImportForm(request.POST or None, request.FILES or None)
    errors: list[Any] = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            job, result = import_or_queue(
                project=project,
                user=request.user,
                kind=ImportJob.Kind.VOTES,
                files={"file": upload},
                options={},
            )
        except ImportRejected as rejected:
            errors = rejected.errors
        else:
            if job is not None:
                return redirect("import-job", slug=slug, pk=job.pk)
            present = result["already_present"]
            said = f"Imported {result['imported']} items from {upload.name}"
            said += f"; {present} were already here." if present else "."
            messages.success(request, said)
            return redirect("vote-import", slug=slug)
    labels = project.all_labels
    context = {
        "project": project,
        "form": form,
        "errors": errors,
        "example_fields": json.dumps({name: "…" for name in project.field_names}),
        "example_votes": json.dumps({labels[0]: ["w1", "w7"], labels[-1]: ["w2", "w3", "w4"]}),
    }
    return render(request, "annotation/vote_import.html", context, status=400 if errors else 200)


@login_required
def import_job_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """A large import running on a worker: its status until it ends (htmx reloads the status
    every second), then what it imported, or every problem on its line."""
    project = project_for(request.user, slug, Role.ADMIN)
    job = get_object_or_404(ImportJob, project=project, pk=pk)
    partial = request.headers.get("HX-Request") == "true"
    template = "annotation/_import_job.html" if partial else "annotation/import_job.html"
    summary = job.result.get("summary", "").rstrip(".") or ", ".join(
        f"{key.replace('_', ' ')}: {value}"
        for key, value in job.result.items()
        if key != "warnings"
    )
    return render(request, template, {"project": project, "job": job, "summary": summary})


def _admin_project(user: Any, slug: str) -> Project:
    return project_for(user, slug, Role.ADMIN)


# Cancel and retry (annotation.jobs.pages.job_action): a project's admins, on its imports.
IMPORT_PAGES = JobPages(ImportJob, "project", "import-job", "rows", JOB_ACTIONS, _admin_project)
