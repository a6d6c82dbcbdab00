"""A model spec's settings, declared once: the Models page's form and the API's input
serializer are both built from `MODEL_FIELDS` (issue 61: they declared the same fields twice,
with their limits and help texts)."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django import forms
from rest_framework import serializers

from annotation.formfields import JSONObjectField
from evaluation.models import ModelSpec, default_stop
from evaluation.runs.kinds import KINDS

_REQUIRED = object()  # a setting without a default: the page and the API both need it


@dataclass(frozen=True)
class ModelField:
    """One setting of a model spec. `kind` is its type: text, int, float, bool, choice,
    mapping (label to text) or stops (a list of texts; typed on the page as a|b, \\n a new
    line). `most` is an int's largest value, a text's length, or each text's length in a
    mapping or a list; `items`, a list's length. A text with `choices` is offered as a select
    on the page and taken as any text on the API. Which kinds read a setting, each kind says
    (`ModelKind.settings`): the page shows a kind's own settings alone."""

    name: str
    kind: str
    default: Any = _REQUIRED  # the API's (a callable: called for each spec)
    least: int | None = None
    most: int | None = None
    items: int | None = None
    strip: bool = True
    choices: Sequence[tuple[str, str]] = ()
    help: str = ""  # the page's
    api_help: str = ""  # the API's description, where it has one
    secret: bool = False  # kept encrypted: a password box on the page, write-only on the API
    page: Mapping[str, Any] = field(default_factory=dict)  # what the page's field alone takes

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


# In the Models page's order (the API's schema lists them in the same order).
MODEL_FIELDS = (
    ModelField("name", "text", most=100),
    ModelField(
        "kind",
        "choice",  # its choices are the registry's, read for each form (kind_choices)
        help="classifiers and python for classification; language models for minimal "
        "pairs; question answering and python for free text",
    ),
    ModelField(
        "source",
        "text",
        most=500,
        help="a hub id (org/name); staff: a folder of MODELS_DIR by its name, or "
        "package.module:callable; a served model: its name, as the server's /v1/models lists it",
    ),
    ModelField(
        "base_url",
        "text",
        default="",
        most=500,
        help="served models: the server's OpenAI-compatible address, e.g. http://gpu-host:8000/v1",
        api_help="openai-compatible: the server's base URL, e.g. http://host:8000/v1",
        page={"label": "Base URL"},
    ),
    ModelField(
        "api_key",
        "text",
        default="",
        most=500,
        help="served models, if the server needs one: kept encrypted, never shown again",
        api_help="openai-compatible: the key, kept encrypted and never returned",
        secret=True,
        page={"label": "API key"},
    ),
    ModelField(
        "scoring",
        "choice",
        default="loglikelihood",
        choices=ModelSpec.Scoring.choices,
        help="served models on classification: log-likelihoods need a server that echoes "
        "the prompt's log-probabilities (vLLM; llama.cpp with --logits_all); else generation",
        page={"required": False},
    ),
    ModelField(
        "concurrency",
        "int",
        default=4,
        least=1,
        most=256,
        help="served models: requests in flight",
    ),
    ModelField(
        "timeout",
        "int",
        default=120,
        least=1,
        most=3600,
        help="served models: seconds per request",
    ),
    ModelField(
        "price_prompt",
        "float",
        default=None,
        least=0,
        help="served models: price per million prompt tokens",
    ),
    ModelField(
        "price_completion",
        "float",
        default=None,
        least=0,
        help="per million completion tokens (the run's cost)",
    ),
    ModelField(
        "label_mapping",
        "mapping",
        default=dict,
        help='model label to project label, e.g. {"LABEL_0": "negative"}',
    ),
    ModelField("max_length", "int", default=256, least=1, most=8192),
    ModelField("batch_size", "int", default=32, least=1, most=4096),
    ModelField(
        "device",
        "choice",
        default="auto",
        choices=ModelSpec.Device.choices,
        page={"choices": [(d, d) for d in ModelSpec.Device.values]},
    ),
    ModelField(
        "precision",
        "choice",
        default="fp32",
        choices=ModelSpec.Precision.choices,
    ),
    ModelField(
        "prompt",
        "text",
        default="",
        most=4000,
        strip=False,
        help="language models: a template over the fields, e.g. Review: {text}"
        "\\nSentiment: (blank: the project's prompt; minimal pairs: {source}\\n)",
        api_help="language models: a template over the fields; blank: the project's prompt",
        page={"widget": forms.Textarea(attrs={"rows": 3})},
    ),
    ModelField(
        "verbalizers",
        "mapping",
        default=dict,
        most=200,
        help='language models: label to words, e.g. {"positive": "great"} (blank: the project\'s)',
        api_help="label -> the words scored for it; overrides the project's",
    ),
    ModelField(
        "target_delimiter",
        "text",
        default=" ",
        most=20,
        strip=False,
        help="language models: what comes between the prompt and a choice or answer",
    ),
    ModelField(
        "few_shot",
        "int",
        default=0,
        least=0,
        most=32,
        help="language models: examples before each",
    ),
    ModelField(
        "few_shot_split",
        "text",
        default="",
        most=8,
        choices=[("", "none"), ("train", "train"), ("dev", "dev"), ("test", "test")],
        help="the release split the shots come from",
    ),
    ModelField(
        "chat_template",
        "bool",
        default=False,
        help="wrap the prompt in the tokenizer's chat template (instruct)",
    ),
    ModelField(
        "stop",
        "stops",
        default=default_stop,
        most=50,
        items=8,
        strip=False,
        help="free text: stop sequences, separated by |; \\n is a new line",
    ),
    ModelField(
        "num_beams",
        "int",
        default=1,
        least=1,
        most=16,
        help="beams for a language model's own output",
    ),
    ModelField("max_new_tokens", "int", default=64, least=1, most=1024),
    ModelField(
        "stride",
        "int",
        default=128,
        least=1,
        most=4096,
        help="QA: token overlap of context windows",
    ),
    ModelField(
        "max_answer_tokens",
        "int",
        default=30,
        least=1,
        most=1024,
        help="QA: the longest answer span",
    ),
    ModelField(
        "allow_random_weights",
        "bool",
        default=False,
        help="run even where the checkpoint lacks weights its kind needs (a sentence "
        "encoder has no classification head): transformers initialises them at random, so "
        "predictions are noise; for a deliberate baseline only",
        api_help="run even where the checkpoint lacks weights its kind needs (a headless "
        "encoder as a classifier): they are initialised at random; for deliberate baselines",
        page={"label": "Allow random weights"},
    ),
)


def kind_choices(*, page: bool = False, staff: bool = True) -> list[tuple[str, str]]:
    """The kinds of the registry (evaluation/runs/kinds.py), read when asked, so that a kind
    registered later is offered too: on the page, those registered there; to a user who is
    not staff, none that runs code on the workers (docs/security.md)."""
    return [
        (kind.name, kind.label)
        for kind in KINDS.values()
        if (kind.on_page or not page) and (staff or not kind.staff_only)
    ]


def stops(typed: str) -> list[str]:
    """Stop sequences as typed: separated by |, with \\n for a new line."""
    return [s.replace("\\n", "\n") for s in typed.split("|") if s]


def typed_stops(values: list[str]) -> str:
    """Stop sequences as the page shows them: the inverse of `stops`."""
    return "|".join(s.replace("\n", "\\n") for s in values)


# The page's field of each type, and what it takes: every number and choice is required (the
# page shows its default), a text only where it has no default, the others are optional.
def _page_text(f: ModelField) -> tuple[type[forms.Field], dict[str, Any]]:
    if f.choices:
        return forms.ChoiceField, {"choices": f.choices, "required": False}
    initial = None if f.required else f.default or None
    taken = {"max_length": f.most, "required": f.required, "strip": f.strip, "initial": initial}
    if f.secret:
        taken["widget"] = forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"})
    return forms.CharField, taken


_PAGE: dict[str, Callable[[ModelField], tuple[type[forms.Field], dict[str, Any]]]] = {
    "text": _page_text,
    "int": lambda f: (
        forms.IntegerField,
        {"initial": f.default, "min_value": f.least, "max_value": f.most},
    ),
    "float": lambda f: (forms.FloatField, {"required": False, "min_value": f.least}),
    "bool": lambda f: (forms.BooleanField, {"required": False}),
    "choice": lambda f: (forms.ChoiceField, {"choices": f.choices}),
    "mapping": lambda f: (JSONObjectField, {"empty_value": {}}),
    "stops": lambda f: (
        forms.CharField,
        {"initial": typed_stops(f.default()), "required": False, "strip": False},
    ),
}


def page_field(f: ModelField) -> forms.Field:
    """The Models page's field, with the kinds that read it for the page's data-kinds
    (static/js/models.js; none: every kind)."""
    made_as, taken = _PAGE[f.kind](f)
    made = made_as(**{**taken, "help_text": f.help, **f.page})
    kinds = [kind.name for kind in KINDS.values() if f.name in kind.settings]
    made.kinds = " ".join(kinds)  # type: ignore[attr-defined]
    return made


# The API's field of each type, and what it takes.
def _defaults(f: ModelField) -> dict[str, Any]:
    return {} if f.required else {"default": f.default}


def _api_text(f: ModelField) -> tuple[type[serializers.Field], dict[str, Any]]:
    taken = {"max_length": f.most, **_defaults(f)}
    if not f.required:
        taken["allow_blank"] = True
    if not f.strip:
        taken["trim_whitespace"] = False
    return serializers.CharField, taken


def _api_mapping(f: ModelField) -> tuple[type[serializers.Field], dict[str, Any]]:
    child = serializers.CharField(max_length=f.most) if f.most else serializers.CharField()
    return serializers.DictField, {"child": child, **_defaults(f)}


_API: dict[str, Callable[[ModelField], tuple[type[serializers.Field], dict[str, Any]]]] = {
    "text": _api_text,
    "int": lambda f: (
        serializers.IntegerField,
        {"min_value": f.least, "max_value": f.most, **_defaults(f)},
    ),
    "float": lambda f: (
        serializers.FloatField,
        {"min_value": f.least, "required": False, "allow_null": True},
    ),
    "bool": lambda f: (serializers.BooleanField, _defaults(f)),
    "choice": lambda f: (serializers.ChoiceField, {"choices": f.choices, **_defaults(f)}),
    "mapping": _api_mapping,
    "stops": lambda f: (
        serializers.ListField,
        {
            "child": serializers.CharField(max_length=f.most, trim_whitespace=False),
            "max_length": f.items,
            **_defaults(f),
        },
    ),
}


def api_field(f: ModelField) -> serializers.Field:
    """The API's input field."""
    made_as, taken = _API[f.kind](f)
    if f.api_help:
        taken["help_text"] = f.api_help
    if f.secret:
        taken["write_only"] = True
    return made_as(**taken)
