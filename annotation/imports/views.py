"""Import pages: originals, and existing contrast sets."""

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from annotation.errors import ImportRejected
from annotation.imports.forms import ImportForm, SetImportForm
from annotation.imports.originals import import_examples
from annotation.imports.serializers import SetImportSerializer
from annotation.imports.sets import run_set_import
from annotation.permissions import Role, project_for


@login_required
def import_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    errors = []
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            batch = import_examples(
                project=project,
                user=request.user,
                data=upload.read(),
                source_name=upload.name,
                fmt=form.cleaned_data["format"] or None,
                mapping=form.cleaned_data["mapping"],
                default_split=form.cleaned_data["split"],
                labels=form.cleaned_data["labels"],
            )
        except ImportRejected as rejected:
            errors = rejected.errors
        else:
            messages.success(request, f"Imported {batch.row_count} examples from {upload.name}.")
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
            try:
                result = run_set_import(project, request.user, data.validated_data)
            except ImportRejected as rejected:
                errors = rejected.errors
            else:
                present = f"; {result.skipped} were already here" if result.skipped else ""
                messages.success(request, f"Imported {result.created} perturbations{present}.")
                for warning in result.warnings[:20]:
                    messages.warning(request, f"line {warning.line}: {warning.message}")
                return redirect("set-import", slug=slug)
    context = {"project": project, "form": form, "errors": errors}
    return render(request, "annotation/set_import.html", context, status=400 if errors else 200)
