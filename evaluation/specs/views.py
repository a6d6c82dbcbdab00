"""The models page: register a model spec. Admins only; everyone else gets 404."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from annotation.errors import DomainError
from annotation.formfields import JSONObjectField
from evaluation.access import admin_project
from evaluation.models import ModelSpec
from evaluation.specs import services


class ModelForm(forms.Form):
    name = forms.CharField(max_length=100)
    kind = forms.ChoiceField(
        choices=ModelSpec.Kind.choices,
        help_text="classifiers and python for classification; language models for minimal "
        "pairs; question answering and python for free text",
    )
    source = forms.CharField(
        max_length=500,
        help_text="a hub id (org/name); staff: a folder in MODELS_DIR or package.module:callable",
    )
    label_mapping = JSONObjectField(
        empty_value={}, help_text='model label to project label, e.g. {"LABEL_0": "negative"}'
    )
    max_length = forms.IntegerField(initial=256, min_value=1, max_value=8192)
    batch_size = forms.IntegerField(initial=32, min_value=1, max_value=4096)
    device = forms.ChoiceField(choices=ModelSpec.Device.choices)
    precision = forms.ChoiceField(choices=ModelSpec.Precision.choices, help_text="bf16/fp16: CUDA")
    prompt = forms.CharField(
        max_length=4000, strip=False, required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text="language models: a template over the fields, e.g. Review: {text}"
        "\\nSentiment: (blank: the project's prompt; minimal pairs: {source}\\n)",
    )  # fmt: skip
    verbalizers = JSONObjectField(
        empty_value={}, help_text='language models: label to words, e.g. {"positive": "great"} '
        "(blank: the project's)",
    )  # fmt: skip
    target_delimiter = forms.CharField(
        max_length=20, initial=" ", strip=False, required=False,
        help_text="language models: what comes between the prompt and a choice or answer",
    )  # fmt: skip
    few_shot = forms.IntegerField(
        initial=0, min_value=0, max_value=32, help_text="language models: examples before each"
    )
    few_shot_split = forms.ChoiceField(
        choices=[("", "none"), ("train", "train"), ("dev", "dev"), ("test", "test")],
        required=False, help_text="the release split the shots come from",
    )  # fmt: skip
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


def stops(typed: str) -> list[str]:
    """Stop sequences as typed: separated by |, with \\n for a new line."""
    return [s.replace("\\n", "\n") for s in typed.split("|") if s]


@login_required
def models_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = admin_project(request.user, slug)
    form = ModelForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        values = {**form.cleaned_data, "stop": stops(form.cleaned_data["stop"])}
        try:
            services.model_register(project=project, user=request.user, **values)
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, f"Model {form.cleaned_data['name']} registered.")
            return redirect("models", slug=slug)
    context = {"project": project, "form": form, "specs": ModelSpec.objects.filter(project=project)}
    return render(request, "evaluation/models.html", context)
