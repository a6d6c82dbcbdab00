from django import forms

from annotation.formfields import JSONObjectField
from annotation.imports.readers import FORMATS
from annotation.projects.config import SPLITS


class ImportForm(forms.Form):
    file = forms.FileField()
    format = forms.ChoiceField(
        choices=[("", "from the file name"), *[(f, f.upper()) for f in FORMATS]], required=False
    )
    split = forms.ChoiceField(
        choices=[(s, s) for s in SPLITS],
        initial="test",
        help_text="Used for rows without a split column.",
    )
    mapping = JSONObjectField(
        empty_value={},
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text='JSON from target to column, e.g. {"text": "Text", "label": "Sentiment"}.',
    )
    labels = JSONObjectField(
        empty_value={}, help_text='label values to project labels, e.g. {"Neg": "negative"}'
    )


class SetImportForm(forms.Form):
    format = forms.ChoiceField(choices=[("paired_tsv", "paired TSV"), ("sets_jsonl", "sets.jsonl")])
    file = forms.FileField(required=False, help_text="sets.jsonl")
    original = forms.FileField(required=False, help_text="paired TSV: the originals")
    contrast = forms.FileField(required=False, help_text="paired TSV: the contrasts, same order")
    mapping = JSONObjectField(
        empty_value={}, help_text='e.g. {"text": "Text", "label": "Sentiment", "tags": "Tags"}'
    )
    labels = JSONObjectField(
        empty_value={}, help_text="label values to project labels (case is matched anyway)"
    )
    split = forms.ChoiceField(choices=[(s, s) for s in SPLITS], initial="test")
    strict = forms.BooleanField(
        required=False, help_text="refuse edits that break the authoring rules instead of warning"
    )
    tags = forms.CharField(required=False, help_text="comma-separated tags for rows without any")
    author = forms.CharField(initial="imported", help_text="the pseudo-author credited")
    accept = forms.BooleanField(required=False, help_text="mark accepted instead of validating")
