"""The models page: register a model spec. Admins only; everyone else gets 404."""

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.errors import DomainError
from annotation.models import Project
from annotation.projects.services import project_update
from annotation.prompting import (
    Prompting,
    check_prompt_length,
    prompt_fields,
    render_prompt_head,
)
from evaluation.access import admin_project
from evaluation.models import ModelSpec
from evaluation.runs.kinds import KINDS
from evaluation.runs.sources import local_models
from evaluation.specs import services
from evaluation.specs.fields import MODEL_FIELDS, kind_choices, page_field, stops


class ModelForm(forms.Form):
    """A model spec's settings, each with the kinds it applies to (evaluation/specs/fields.py,
    which the API's input serializer is built from too)."""

    def __init__(self, *args: Any, user: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields.update({f.name: page_field(f) for f in MODEL_FIELDS})
        kind: Any = self.fields["kind"]
        kind.choices = kind_choices(page=True, staff=user.is_staff)


@login_required
def models_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = admin_project(request.user, slug)
    form = ModelForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        values = {**form.cleaned_data, "stop": stops(form.cleaned_data["stop"])}
        values["scoring"] = values["scoring"] or ModelSpec.Scoring.LOGLIKELIHOOD
        try:
            services.model_register(project=project, user=request.user, **values)
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, f"Model {form.cleaned_data['name']} registered.")
            return redirect("models", slug=slug)
    on_page = [name for name, kind in KINDS.items() if kind.on_page]
    specs = ModelSpec.objects.filter(project=project, kind__in=on_page)
    context = {
        "project": project,
        "form": form,
        "specs": [(spec, KINDS[spec.kind].label) for spec in specs],  # with its kind's label
        # Where staff's local models live, and what is there (never shown to anyone else)
        "models_dir": local_models() if request.user.is_staff else None,
    }
    return render(request, "evaluation/models.html", context)


@login_required
@require_POST
def model_check_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The Check of a served model (docs/models.md), said on the Models page."""
    project = admin_project(request.user, slug)
    spec = get_object_or_404(ModelSpec, project=project, pk=pk)
    try:
        report = services.model_check(spec=spec)
    except DomainError as error:
        messages.error(request, error.message)
        return redirect("models", slug=slug)
    echo = {"aligned": "right", "shifted": "shifted by one token"}.get(report.echo, report.echo)
    said = f"Check of {spec.name}: " + ("ready to score." if report.ok else "not ready.")
    if report.top:
        said += (
            f" Prompt log-probabilities (echo): {echo}; the likeliest next tokens listed: "
            f"{report.top} distinct."
        )
    (messages.success if report.ok else messages.error)(request, said)
    for problem in report.problems:
        messages.error(request, problem)
    for note in report.notes:
        messages.warning(request, note)
    return redirect("models", slug=slug)


class PromptForm(forms.Form):
    """The project's prompt, and a verbalizer per label (docs/prompting.md)."""

    prompt = forms.CharField(
        max_length=4000,
        strip=False,
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="a template over the fields, e.g. {placeholders}; blank: each field on its line "
        "(name: value), then Answer:",
    )

    def __init__(self, project: Project, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        names = prompt_fields(project.task_type, project.field_names)
        field = self.fields["prompt"]
        field.help_text = field.help_text.format(placeholders=" ".join(f"{{{n}}}" for n in names))
        field.initial = project.setting("prompt")
        words = project.setting("verbalizers")
        if project.task_type != Project.TaskType.CLASSIFICATION:
            return
        for n, label in enumerate(project.labels):
            self.fields[f"word_{n}"] = forms.CharField(
                label=f"Words for {label}",
                max_length=200,
                required=False,
                initial=words.get(label, ""),
                help_text="blank: the label itself",
            )

    def settings(self, project: Project) -> dict[str, Any]:
        data = self.cleaned_data
        words = {
            label: data[f"word_{n}"].strip()
            for n, label in enumerate(project.labels)
            if data.get(f"word_{n}", "").strip()
        }
        return {"prompt": data["prompt"], "verbalizers": words}


@login_required
def prompt_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The prompt language models read, and how the first examples look through it."""
    project = admin_project(request.user, slug)
    form = PromptForm(project, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            project_update(project=project, user=request.user, settings=form.settings(project))
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, "Prompt saved.")
            return redirect("prompt", slug=slug)
    context = {"project": project, "form": form, "previews": _previews(project)}
    return render(request, "evaluation/prompt.html", context)


# Of each example through the prompt, the page shows this much: a prompt of 4,000 characters
# that repeats a long field renders to millions of characters (issue 48).
PREVIEW_CHARS = 10_000


def _previews(project: Project) -> list[dict[str, Any]]:
    """The first three examples as a zero-shot language model reads them, each up to
    PREVIEW_CHARS, with what is left out and whether runs refuse it (PROMPT_MAX_CHARS)."""
    prompting = Prompting.of(project)
    out = []
    for example in project.examples.order_by("id")[:3]:
        fields, refused = example.fields, ""
        if project.task_type == Project.TaskType.MINIMAL_PAIR:
            source = fields.get("source")
            context, length = (
                render_prompt_head(prompting.prompt, {"source": source}, PREVIEW_CHARS)
                if source
                else ("", 0)
            )
            after = "Scored after it"
            choices = [("", str(fields.get("text", ""))[:PREVIEW_CHARS])]
        else:
            context, length = render_prompt_head(prompting.prompt, fields, PREVIEW_CHARS)
            try:
                check_prompt_length(example.external_id, length)
            except DomainError as error:
                refused = error.message
            after, choices = "The model generates its answer after it", []
            if not project.is_free_text:
                after = "Choices, each scored after it"
                choices = [(label, " " + word) for label, word in prompting.word_of.items()]
        more = length - len(context)
        out.append(
            {
                "id": example.external_id,
                "context": context,
                "more": f"{more:,}" if more else "",
                "refused": refused,
                "after": after,
                "choices": choices,
            }
        )
    return out
