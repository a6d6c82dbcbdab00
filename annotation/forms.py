import json
from typing import Any

from django import forms

from annotation.importers import FORMATS
from annotation.schema import SPLITS


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
    mapping = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text='JSON from target to column, e.g. {"text": "Text", "label": "Sentiment"}.',
    )

    def clean_mapping(self) -> dict[str, Any]:
        raw = self.cleaned_data["mapping"].strip()
        if not raw:
            return {}
        try:
            mapping = json.loads(raw)
        except json.JSONDecodeError as error:
            raise forms.ValidationError(f"not valid JSON: {error.msg}.") from None
        if not isinstance(mapping, dict):
            raise forms.ValidationError("the mapping must be a JSON object.")
        return mapping


class MemberForm(forms.Form):
    username = forms.CharField()
    roles = forms.MultipleChoiceField(
        choices=[("admin", "admin"), ("expert", "expert"), ("validator", "validator")],
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
