from django import forms

from annotation.formfields import AgreementField, JSONObjectField
from annotation.models.config import SPLITS


class ReleaseForm(forms.Form):
    version = forms.CharField(max_length=32, help_text="e.g. 1.0; a version is never reused.")
    split_strategy = forms.ChoiceField(
        choices=[("pivot", "pivot: each set in its pivot's split"), ("random", "random (seeded)")]
    )
    seed = forms.IntegerField(initial=0)
    proportions = JSONObjectField(
        initial='{"dev": 0.2, "test": 0.8}', help_text="for random splits"
    )
    min_agreement = AgreementField(
        required=False,
        help_text="votes with the majority a perturbation needs, as on Settings: a number, or "
        "per split, e.g. test=4 dev=3; blank: the project's",
    )

    include_comments = forms.BooleanField(
        required=False,
        help_text="add comments.jsonl: the comments on its perturbations, without names",
    )

    def clean_min_agreement(self) -> dict[str, int] | None:
        value = self.cleaned_data["min_agreement"]
        return {split: value for split in SPLITS} if isinstance(value, int) else value
