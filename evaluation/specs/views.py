"""The models page: register a model spec. Admins only; everyone else gets 404."""

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.errors import DomainError
from annotation.formfields import JSONObjectField
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
from evaluation.specs import services


class ModelForm(forms.Form):
    name = forms.CharField(max_length=100)
    kind = forms.ChoiceField(
        choices=[c for c in ModelSpec.Kind.choices if c[0] != ModelSpec.Kind.PREDICTIONS],
        help_text="classifiers and python for classification; language models for minimal "
        "pairs; question answering and python for free text",
    )
    source = forms.CharField(
        max_length=500,
        help_text="a hub id (org/name); staff: a folder of MODELS_DIR by its name, or "
        "package.module:callable; a served model: its name, as the server's /v1/models lists it",
    )
    base_url = forms.CharField(
        max_length=500,
        required=False,
        label="Base URL",
        help_text="served models: the server's OpenAI-compatible address, e.g. "
        "http://gpu-host:8000/v1",
    )
    api_key = forms.CharField(
        max_length=500,
        required=False,
        label="API key",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="served models, if the server needs one: kept encrypted, never shown again",
    )
    scoring = forms.ChoiceField(
        choices=ModelSpec.Scoring.choices,
        required=False,
        help_text="served models on classification: log-likelihoods need a server that echoes "
        "the prompt's log-probabilities (vLLM; llama.cpp with --logits_all); else generation",
    )
    concurrency = forms.IntegerField(
        initial=4, min_value=1, max_value=256, help_text="served models: requests in flight"
    )
    timeout = forms.IntegerField(
        initial=120, min_value=1, max_value=3600, help_text="served models: seconds per request"
    )
    price_prompt = forms.FloatField(
        required=False, min_value=0, help_text="served models: price per million prompt tokens"
    )
    price_completion = forms.FloatField(
        required=False, min_value=0, help_text="per million completion tokens (the run's cost)"
    )
    label_mapping = JSONObjectField(
        empty_value={}, help_text='model label to project label, e.g. {"LABEL_0": "negative"}'
    )
    max_length = forms.IntegerField(initial=256, min_value=1, max_value=8192)
    batch_size = forms.IntegerField(initial=32, min_value=1, max_value=4096)
    device = forms.ChoiceField(choices=[(d, d) for d in ModelSpec.Device.values])
    precision = forms.ChoiceField(choices=ModelSpec.Precision.choices)
    prompt = forms.CharField(
        max_length=4000,
        strip=False,
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="language models: a template over the fields, e.g. Review: {text}"
        "\\nSentiment: (blank: the project's prompt; minimal pairs: {source}\\n)",
    )
    verbalizers = JSONObjectField(
        empty_value={},
        help_text='language models: label to words, e.g. {"positive": "great"} '
        "(blank: the project's)",
    )
    target_delimiter = forms.CharField(
        max_length=20,
        initial=" ",
        strip=False,
        required=False,
        help_text="language models: what comes between the prompt and a choice or answer",
    )
    few_shot = forms.IntegerField(
        initial=0, min_value=0, max_value=32, help_text="language models: examples before each"
    )
    few_shot_split = forms.ChoiceField(
        choices=[("", "none"), ("train", "train"), ("dev", "dev"), ("test", "test")],
        required=False,
        help_text="the release split the shots come from",
    )
    chat_template = forms.BooleanField(
        required=False, help_text="wrap the prompt in the tokenizer's chat template (instruct)"
    )
    stop = forms.CharField(
        initial="\\n",
        required=False,
        strip=False,
        help_text="free text: stop sequences, separated by |; \\n is a new line",
    )
    num_beams = forms.IntegerField(
        initial=1, min_value=1, max_value=16, help_text="beams for a language model's own output"
    )
    max_new_tokens = forms.IntegerField(initial=64, min_value=1, max_value=1024)
    stride = forms.IntegerField(
        initial=128, min_value=1, max_value=4096, help_text="QA: token overlap of context windows"
    )
    max_answer_tokens = forms.IntegerField(
        initial=30, min_value=1, max_value=1024, help_text="QA: the longest answer span"
    )
    allow_random_weights = forms.BooleanField(
        required=False,
        label="Allow random weights",
        help_text="run even where the checkpoint lacks weights its kind needs (a sentence "
        "encoder has no classification head): transformers initialises them at random, so "
        "predictions are noise; for a deliberate baseline only",
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        kind: Any = self.fields["kind"]
        if not user.is_staff:  # only staff may make a worker run code (docs/security.md)
            kind.choices = [c for c in kind.choices if c[0] != ModelSpec.Kind.PYTHON]
        for name, field in self.fields.items():
            field.kinds = " ".join(FIELD_KINDS.get(name, ()))  # type: ignore[attr-defined]


Kind = ModelSpec.Kind
_CHECKPOINTS = (
    Kind.HF_SEQUENCE_CLASSIFICATION,
    Kind.HF_QUESTION_ANSWERING,
    Kind.HF_CAUSAL_LM,
    Kind.HF_SEQ2SEQ,
)
_PROMPTED = (Kind.HF_CAUSAL_LM, Kind.HF_SEQ2SEQ, Kind.OPENAI_COMPATIBLE)
_SERVED = (Kind.OPENAI_COMPATIBLE,)
# The kinds each setting applies to, so that the page shows only a kind's own settings; a
# setting not listed applies to every kind.
FIELD_KINDS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        [
            "base_url",
            "api_key",
            "scoring",
            "concurrency",
            "timeout",
            "price_prompt",
            "price_completion",
        ],
        _SERVED,
    ),
    **dict.fromkeys(
        [
            "prompt",
            "verbalizers",
            "target_delimiter",
            "few_shot",
            "few_shot_split",
            "chat_template",
            "stop",
            "max_new_tokens",
        ],
        _PROMPTED,
    ),
    **dict.fromkeys(["max_length", "device", "precision", "allow_random_weights"], _CHECKPOINTS),
    "batch_size": (*_CHECKPOINTS, Kind.PYTHON),
    "label_mapping": (Kind.HF_SEQUENCE_CLASSIFICATION, Kind.PYTHON),
    "num_beams": (Kind.HF_CAUSAL_LM, Kind.HF_SEQ2SEQ),
    **dict.fromkeys(["stride", "max_answer_tokens"], (Kind.HF_QUESTION_ANSWERING,)),
}


def stops(typed: str) -> list[str]:
    """Stop sequences as typed: separated by |, with \\n for a new line."""
    return [s.replace("\\n", "\n") for s in typed.split("|") if s]


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
    context = {
        "project": project,
        "form": form,
        "specs": ModelSpec.objects.filter(project=project).exclude(kind=ModelSpec.Kind.PREDICTIONS),
        # Where staff's local models live, and what is there (never shown to anyone else)
        "models_dir": services.local_models() if request.user.is_staff else None,
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
        said += f" Prompt log-probabilities (echo): {echo}; top list: {report.top} tokens."
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
