from django import forms

from annotation.formfields import JSONObjectField


class ReleaseForm(forms.Form):
    version = forms.CharField(max_length=32, help_text="e.g. 1.0; a version is never reused.")
    split_strategy = forms.ChoiceField(
        choices=[("pivot", "pivot: each set in its pivot's split"), ("random", "random (seeded)")]
    )
    seed = forms.IntegerField(initial=0)
    proportions = JSONObjectField(
        initial='{"dev": 0.2, "test": 0.8}', help_text="for random splits"
    )
    min_agreement = JSONObjectField(
        help_text='votes the label needs per split, e.g. {"test": 4}; project defaults otherwise',
    )
