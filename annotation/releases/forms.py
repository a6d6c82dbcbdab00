import json
from typing import Any

from django import forms


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
