"""Import pages: originals, existing contrast sets, and the status of a large import."""

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from annotation.errors import ImportRejected
from annotation.imports.background import files_and_options, import_or_queue
from annotation.imports.forms import ImportForm, SetImportForm
from annotation.imports.serializers import SetImportSerializer
from annotation.models import ImportJob
from annotation.permissions import Role, project_for


@login_required
def import_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    errors = []
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        files = {"file": upload}
        options = {"fmt": form.cleaned_data["format"] or None,
                   "mapping": form.cleaned_data["mapping"],
                   "default_split": form.cleaned_data["split"],
                   "labels": form.cleaned_data["labels"]}  # fmt: skip
        try:
            job, result = import_or_queue(
                project=project, user=request.user, kind=ImportJob.Kind.ORIGINALS, files=files,
                options=options,
            )  # fmt: skip
        except ImportRejected as rejected:
            errors = rejected.errors
        else:
            if job is not None:
                return redirect("import-job", slug=slug, pk=job.pk)
            n = result["imported"]
            messages.success(request, f"Imported {n} examples from {upload.name}.")
            return redirect("project-import", slug=project.slug)
    batches = project.import_batches.select_related("created_by")[:20]
    context = {"project": project, "form": form, "errors": errors, "batches": batches}
    return render(request, "annotation/import.html", context, status=400 if errors else 200)


@login_required
def set_import_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    form = SetImportForm(request.POST or None, request.FILES or None)
    errors: list[Any] = []
    if request.method == "POST" and form.is_valid():
        values = {k: v for k, v in form.cleaned_data.items() if v not in (None, "")}
        values["tags"] = [t.strip() for t in values.get("tags", "").split(",") if t.strip()]
        data = SetImportSerializer(data=values)
        if not data.is_valid():
            form.add_error(None, json.dumps(data.errors))
        else:
            files, options = files_and_options(data.validated_data)
            try:
                job, result = import_or_queue(
                    project=project, user=request.user, kind=ImportJob.Kind.SETS, files=files,
                    options=options,
                )  # fmt: skip
            except ImportRejected as rejected:
                errors = rejected.errors
            else:
                if job is not None:
                    return redirect("import-job", slug=slug, pk=job.pk)
                skipped = result["already_present"]
                present = f"; {skipped} were already here" if skipped else ""
                created = result["perturbations"]
                messages.success(request, f"Imported {created} perturbations{present}.")
                for warning in result["warnings"][:20]:
                    messages.warning(request, f"line {warning['line']}: {warning['message']}")
                return redirect("set-import", slug=slug)
    context = {"project": project, "form": form, "errors": errors}
    return render(request, "annotation/set_import.html", context, status=400 if errors else 200)


@login_required
def import_job_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """A large import running on a worker: its status until it ends (htmx reloads the status
    every second), then what it imported, or every problem on its line."""
    project = project_for(request.user, slug, Role.ADMIN)
    job = get_object_or_404(ImportJob, project=project, pk=pk)
    partial = request.headers.get("HX-Request") == "true"
    template = "annotation/_import_job.html" if partial else "annotation/import_job.html"
    summary = ", ".join(
        f"{key.replace('_', ' ')}: {value}"
        for key, value in job.result.items()
        if key != "warnings"
    )
    return render(request, template, {"project": project, "job": job, "summary": summary})
