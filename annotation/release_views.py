"""Pages for releases and the import of existing contrast sets."""

import json
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from annotation.importers import ImportRejected
from annotation.permissions import Role, project_for
from annotation.release_api import SetImportSerializer, run_set_import
from annotation.releases import dataset_card, release_create, release_diff
from annotation.schema import SPLITS


class ReleaseForm(forms.Form):
    version = forms.CharField(max_length=32, help_text="e.g. 1.0; a version is never reused.")
    split_strategy = forms.ChoiceField(
        choices=[("pivot", "pivot: each set in its pivot's split"), ("random", "random (seeded)")]
    )
    seed = forms.IntegerField(initial=0)
    proportions = forms.CharField(
        required=False, initial='{"dev": 0.2, "test": 0.8}', help_text="for random splits"
    )
    min_agreement = forms.CharField(
        required=False,
        help_text='votes the label needs per split, e.g. {"test": 4}; project defaults otherwise',
    )

    def _json(self, name: str) -> Any:
        raw = self.cleaned_data[name].strip()
        if not raw:
            return None
        try:
            return json.loads(raw)
        except json.JSONDecodeError as error:
            raise forms.ValidationError(f"not valid JSON: {error.msg}.") from None

    def clean_proportions(self) -> Any:
        return self._json("proportions")

    def clean_min_agreement(self) -> Any:
        return self._json("min_agreement")


@login_required
def releases_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    form = ReleaseForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            release = release_create(project=project, user=request.user, **form.cleaned_data)
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, f"Release {release.version} published.")
            return redirect("release-detail", slug=slug, pk=release.pk)
    releases = project.releases.select_related("created_by")
    context = {"project": project, "form": form, "releases": releases}
    return render(request, "annotation/releases.html", context)


@login_required
def release_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    release = get_object_or_404(project.releases, pk=pk)
    others = project.releases.exclude(pk=pk)
    diff = None
    if request.GET.get("against"):
        other = get_object_or_404(others, pk=request.GET["against"])
        diff = release_diff(other, release)
    context = {
        "project": project,
        "release": release,
        "card": dataset_card(project, release),
        "others": others,
        "diff": diff,
        "splits": sorted(release.counts.get("sets", {})),
    }
    return render(request, "annotation/release_detail.html", context)


class SetImportForm(forms.Form):
    format = forms.ChoiceField(choices=[("paired_tsv", "paired TSV"), ("sets_jsonl", "sets.jsonl")])
    file = forms.FileField(required=False, help_text="sets.jsonl")
    original = forms.FileField(required=False, help_text="paired TSV: the originals")
    contrast = forms.FileField(required=False, help_text="paired TSV: the contrasts, same order")
    mapping = forms.CharField(
        required=False, help_text='e.g. {"text": "Text", "label": "Sentiment", "tags": "Tags"}'
    )
    split = forms.ChoiceField(choices=[(s, s) for s in SPLITS], initial="test")
    tags = forms.CharField(required=False, help_text="comma-separated tags for rows without any")
    author = forms.CharField(initial="imported", help_text="the pseudo-author credited")
    accept = forms.BooleanField(required=False, help_text="mark accepted instead of validating")


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
                n = run_set_import(project, request.user, data.validated_data)
            except ImportRejected as rejected:
                errors = rejected.errors
            else:
                messages.success(request, f"Imported {n} perturbations.")
                return redirect("set-import", slug=slug)
    context = {"project": project, "form": form, "errors": errors}
    return render(request, "annotation/set_import.html", context, status=400 if errors else 200)
