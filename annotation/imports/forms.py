from typing import Any

from django import forms

from annotation.imports.background import FILE_FIELDS
from annotation.imports.published.datasets import DATASETS
from annotation.imports.readers import FORMATS
from annotation.models.config import SPLITS


class ImportForm(forms.Form):
    """The Import page's first step (the file); the preview's choices are read beside it."""

    file = forms.FileField(required=False)
    format = forms.ChoiceField(
        choices=[("", "from the file name"), *[(f, f.upper()) for f in FORMATS]], required=False
    )
    split = forms.ChoiceField(
        choices=[(s, s) for s in SPLITS],
        initial="test",
        help_text="for rows without a split column",
    )
    skip_bad = forms.BooleanField(
        required=False,
        label="Import the good rows and skip the bad ones",
        help_text="the skipped lines are listed with their problems, to download",
    )

    def clean(self) -> dict[str, Any]:
        super().clean()
        if not self.cleaned_data.get("file") and not self.data.get("upload"):
            raise forms.ValidationError("Choose a file to import.")
        return self.cleaned_data


class SetImportForm(forms.Form):
    """The Import sets page: the files first, then their preview (mapping and label values
    chosen there); the options stay on the page across both steps."""

    format = forms.ChoiceField(choices=[("paired_tsv", "paired TSV"), ("sets_jsonl", "sets.jsonl")])
    file = forms.FileField(required=False, help_text="sets.jsonl")
    original = forms.FileField(required=False, help_text="paired TSV: the originals")
    contrast = forms.FileField(required=False, help_text="paired TSV: the contrasts, same order")
    split = forms.ChoiceField(choices=[(s, s) for s in SPLITS], initial="test")
    strict = forms.BooleanField(
        required=False, help_text="refuse edits that break the authoring rules instead of warning"
    )
    tags = forms.CharField(required=False, help_text="comma-separated tags for rows without any")
    author = forms.RegexField(
        r"^[\w.-]{1,60}$",
        initial="imported",
        help_text="the pseudo-author credited",
        error_messages={"invalid": "letters, digits, '.', '-' or '_', at most 60."},
    )
    accept = forms.BooleanField(required=False, help_text="mark accepted instead of validating")

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if not self.data.get("upload"):
            needed = ["file"] if data.get("format") == "sets_jsonl" else ["original", "contrast"]
            for name in needed:
                if not data.get(name):
                    self.add_error(name, "This file is required.")
        data["tags"] = [t.strip() for t in data.get("tags", "").split(",") if t.strip()]
        return data

    def uploads(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {name: data[name] for name in FILE_FIELDS if data.get(name)}


class VoteImportForm(forms.Form):
    file = forms.FileField(help_text="JSON Lines, one item per line")


class PublishedImportForm(forms.Form):
    """A published contrast set in one step (docs/published/): the dataset and its own files,
    in the order its repository names them."""

    dataset = forms.ChoiceField(choices=[(d.key, d.name) for d in DATASETS.values()])
    name = forms.CharField(
        max_length=200,
        required=False,
        help_text="the new project's name (default: the dataset's, e.g. IMDb contrast sets); "
        "unique, whatever its case",
    )
    slug = forms.SlugField(
        required=False, help_text="the new project's slug (default: the dataset)"
    )
    file1 = forms.FileField(
        label="First file", help_text="the originals' file, where there are two"
    )
    file2 = forms.FileField(label="Second file", required=False)
    file3 = forms.FileField(label="Third file", required=False, help_text="IMDb: dev_original.tsv")
    file4 = forms.FileField(label="Fourth file", required=False, help_text="IMDb: dev_contrast.tsv")
    to_validation = forms.BooleanField(
        required=False, help_text="send the sets to validation instead of accepting them"
    )

    def __init__(self, *args: Any, new_project: bool = True, **kwargs: Any):
        super().__init__(*args, **kwargs)
        if not new_project:
            del self.fields["slug"]
            del self.fields["name"]
