"""The project setup page's forms: what a project is (fields, labels, tags, settings and
guidelines), with a working template per task type. Every rule is the services' own
(project_rules), so the page, the API and the Django admin refuse the same things with the
same messages."""

import json
from typing import Any

from django import forms

from annotation.crowd.gates import GATE_SETTINGS
from annotation.formfields import AgreementField, agreement_text
from annotation.models import Project
from annotation.models.config import (
    CHOICE_SETTINGS,
    DEFAULT_SETTINGS,
    FIELD_KINDS,
    FRACTION_SETTINGS,
)

# A working project of each type, to start from and change.
TEMPLATES: dict[str, dict[str, Any]] = {
    "classification": {
        "fields": [{"name": "text", "kind": "text", "editable": True}],
        "labels": ["negative", "positive"],
        "extra_labels": [],
        "tags": [
            {"name": "negation", "description": "adds or removes a negation"},
            {"name": "quantifier", "description": "changes how many or how much"},
        ],
        "guidelines": "# Guidelines\n\nChange as few words as possible so that the gold label "
        "flips. Keep the text fluent and plausible.\n",
    },
    "free_text": {
        "fields": [
            {"name": "context", "kind": "text", "editable": True},
            {"name": "question", "kind": "text", "editable": True},
        ],
        "labels": [],
        "extra_labels": ["unanswerable"],
        "tags": [{"name": "entity", "description": "changes who or what the answer is"}],
        "guidelines": "# Guidelines\n\nEdit the context or the question so that the answer "
        "changes, and write the new answer as a span of the context.\n",
    },
    "minimal_pair": {
        "fields": [
            {"name": "source", "kind": "text", "editable": False},
            {"name": "text", "kind": "text", "editable": True},
        ],
        "labels": ["acceptable", "unacceptable"],
        "extra_labels": [],
        "tags": [{"name": "agreement", "description": "breaks subject-verb agreement"}],
        "guidelines": "# Guidelines\n\nEdit the acceptable text into an unacceptable one that "
        "differs in one phenomenon only.\n",
    },
}
TASK_NAMES = dict(Project.TaskType.choices)
SETTING_HELP = {
    "votes_per_item": "validators' votes that resolve an item",
    "majority": "votes for one response that decide it",
    "release_min_agreement": "votes with the majority a perturbation needs to be released: "
    "a number, or per split, e.g. test=4 dev=3",
    "validator_min_votes": "votes before a validator's agreement is judged",
    "validator_max_disagreement": "share of disagreement with the majority that unqualifies",
    "claim_ttl": "seconds a pivot stays claimed",
    "lease_ttl": "seconds an item stays leased to a validator",
    "max_perturbations_per_pivot": "",
    "max_edit_ratio": "largest share of the editable fields' words an edit may change (read-only "
    "fields are not counted); blank on a new project: 1.0 (off) for free text with a read-only "
    "field, whose questions are often rewritten whole, else 0.5",
    "require_label_change": "an edit must flip the gold label",
    "control_rate": "share of items shown to validators as controls",
    "answer_match_f1": "free text: token F1 at which two answers match",
    "answer_normalization": "free text: squad removes articles; ropes keeps them; drop compares "
    "numbers as numbers and aligns the spans of multi-span answers",
    "answer_consistency": "free text: a set is consistent when every member has F1 above 0.8 "
    "(f1), or is an exact match (em)",
    "em_by_field": "classification: a field whose equal values make one question; runs report "
    "exact match by question (every row of it right), as MC-TACO does. Empty: none",
    "qualification_items": "crowd: items of the qualification test a new validator answers "
    "first (0: no test); drawn from the gold pool, beside the comprehension questions",
    "qualification_min_accuracy": "crowd: share of the test to get right",
    "qualification_attempts": "crowd: attempts at the test before a validator's work ends",
    "gold_rate": "crowd: share of served items that are gold checks (0: none)",
    "gold_min_accuracy": "crowd: gold accuracy below which a validator is paused",
    "gold_min_count": "crowd: gold items answered before the accuracy is judged",
    "items_per_participant": "crowd: items a study participant labels before the completion "
    "code, test items and gold checks included",
}
# Edited elsewhere: the Prompt page, and the Studies page (comprehension questions).
PAGE_SETTINGS = [
    key
    for key in DEFAULT_SETTINGS
    if key not in ("prompt", "verbalizers", "qualification_questions")
]


# Fractions a page must state; the edit limit may be left blank (ProjectForm.settings).
STATED = [key for key in FRACTION_SETTINGS if key != "max_edit_ratio"]


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


class ProjectForm(forms.Form):
    name = forms.CharField(max_length=200)
    slug = forms.SlugField(max_length=64, help_text="its address: /p/<slug>/; cannot change")
    task_type = forms.ChoiceField(choices=Project.TaskType.choices)
    labels = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="one per line, in order; keys 1-9 pick them. Free text: none",
    )
    extra_labels = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="one per line: responses validators may give besides the labels",
    )
    guidelines = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 10}),
        help_text="Markdown; a change publishes a new version",
    )

    def __init__(self, *args: Any, project: Project | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        for key in PAGE_SETTINGS:
            default = DEFAULT_SETTINGS[key]
            help_text = SETTING_HELP.get(key, "")
            if isinstance(default, bool):
                field: forms.Field = forms.BooleanField(required=False, help_text=help_text)
            elif key in CHOICE_SETTINGS:
                choices = [(c, c) for c in CHOICE_SETTINGS[key]]
                field = forms.ChoiceField(choices=choices, help_text=help_text)
            elif key in FRACTION_SETTINGS:
                field = forms.FloatField(
                    min_value=0, max_value=1, help_text=help_text, required=key in STATED
                )
            elif key == "release_min_agreement":
                field = AgreementField(help_text=help_text)
            elif key == "em_by_field":
                field = forms.CharField(max_length=64, required=False, help_text=help_text)
            else:
                field = forms.IntegerField(min_value=0, max_value=10**9, help_text=help_text)
            field.label = key.replace("_", " ").capitalize()
            self.fields[f"setting_{key}"] = field
        if project is not None:
            del self.fields["slug"]
            if project.examples.exists():
                self.fields["task_type"].disabled = True
                self.fields["task_type"].help_text = "fixed once examples are imported"

    def clean_labels(self) -> list[str]:
        return _lines(self.cleaned_data["labels"])

    def clean_extra_labels(self) -> list[str]:
        return _lines(self.cleaned_data["extra_labels"])

    def settings(self) -> dict[str, Any]:
        """The settings typed; a blank edit limit is left to the services' default (a new
        project's depends on its editable fields) or to the project's current value."""
        typed = {key: self.cleaned_data[f"setting_{key}"] for key in PAGE_SETTINGS}
        return {key: value for key, value in typed.items() if value is not None}

    @staticmethod
    def initial_for(values: dict[str, Any]) -> dict[str, Any]:
        """The form's initial data from a project's (or a template's) values."""
        settings = {**DEFAULT_SETTINGS, **values.get("settings", {})}
        return {
            "name": values.get("name", ""),
            "task_type": values["task_type"],
            "labels": "\n".join(values["labels"]),
            "extra_labels": "\n".join(values["extra_labels"]),
            "guidelines": values.get("guidelines", ""),
            **{f"setting_{key}": settings[key] for key in PAGE_SETTINGS},
            # A template states no edit limit: the new project's fields choose it.
            "setting_max_edit_ratio": values.get("settings", {}).get("max_edit_ratio"),
            "setting_release_min_agreement": agreement_text(settings["release_min_agreement"]),
        }


class FieldForm(forms.Form):
    name = forms.CharField(max_length=64, required=False)
    kind = forms.ChoiceField(choices=[(k, k) for k in FIELD_KINDS], initial="text")
    editable = forms.BooleanField(required=False, help_text="experts may edit it")


class TagForm(forms.Form):
    name = forms.CharField(max_length=64, required=False)
    description = forms.CharField(max_length=1000, required=False)
    target = forms.IntegerField(
        min_value=0, max_value=10**6, required=False, help_text="perturbations wanted"
    )


FieldFormSet = forms.formset_factory(FieldForm, extra=2, max_num=50, absolute_max=50)
TagFormSet = forms.formset_factory(TagForm, extra=3, max_num=100, absolute_max=100)


def named_rows(formset: forms.BaseFormSet) -> list[dict[str, Any]]:
    """The formset's rows that have a name; blank rows are spare."""
    return [f.cleaned_data for f in formset.forms if f.cleaned_data.get("name", "").strip()]


def field_values(formset: forms.BaseFormSet) -> list[dict[str, Any]]:
    return [
        {"name": row["name"].strip(), "kind": row["kind"], "editable": row["editable"]}
        for row in named_rows(formset)
    ]


def tag_values(formset: forms.BaseFormSet) -> list[dict[str, Any]]:
    return [
        {"name": row["name"].strip(), "description": row["description"], "target": row["target"]}
        for row in named_rows(formset)
    ]


def template_values(task_type: str) -> dict[str, Any]:
    return {"task_type": task_type, **json.loads(json.dumps(TEMPLATES[task_type]))}


class MemberForm(forms.Form):
    """One user's roles. Its ids are its own (`member_…`): the Members page also holds
    PeopleForm, and shared ids let a click on one form's role label tick the other's box."""

    username = forms.CharField()
    roles = forms.MultipleChoiceField(
        choices=[("admin", "admin"), ("expert", "expert"), ("validator", "validator")],
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs["auto_id"] = "member_%s"
        super().__init__(*args, **kwargs)


class PeopleForm(forms.Form):
    """Many people at once: pasted lines, or a CSV file (username,email,roles)."""

    people = forms.CharField(
        required=False,
        max_length=500_000,
        widget=forms.Textarea(
            attrs={
                "rows": 5,
                "placeholder": "ana@example.org\nben, ben@example.org, validator\ncarla, expert",
            }
        ),
        help_text="one person per line: a username, an e-mail, or both, and roles if not those "
        "ticked below; or the lines of a CSV with the header username,email,roles",
    )
    file = forms.FileField(required=False, label="or a CSV file")
    roles = forms.MultipleChoiceField(
        choices=[("admin", "admin"), ("expert", "expert"), ("validator", "validator")],
        required=False,
        initial=["validator"],
        widget=forms.CheckboxSelectMultiple,
        label="Roles (for lines that name none)",
    )

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs["auto_id"] = "people_%s"  # apart from MemberForm's
        super().__init__(*args, **kwargs)

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        upload = data.get("file")
        if upload is not None:
            if upload.size > 2_000_000:
                raise forms.ValidationError("the CSV file must be under 2 MB.")
            try:
                data["people"] = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise forms.ValidationError("the CSV file must be UTF-8 text.") from None
        if "\x00" in data.get("people", ""):
            raise forms.ValidationError("the list holds a NUL character (\\x00).")
        if not data.get("people", "").strip():
            raise forms.ValidationError("paste a list of people or choose a CSV file.")
        return data

    def text(self) -> str:
        return str(self.cleaned_data["people"])


class GatesForm(forms.Form):
    """The Studies page's gates: ProjectForm's own fields for these settings, so that both pages
    refuse the same values."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        whole = ProjectForm()
        for key in GATE_SETTINGS:
            self.fields[f"setting_{key}"] = whole.fields[f"setting_{key}"]

    def settings(self) -> dict[str, Any]:
        return {key: self.cleaned_data[f"setting_{key}"] for key in GATE_SETTINGS}

    def refusal(self) -> str:
        """The first error, as one sentence that names the setting."""
        name, errors = next(iter(self.errors.items()))
        return f"{name.removeprefix('setting_')}: {errors[0]}"
