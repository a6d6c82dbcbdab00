from typing import Any

from rest_framework import serializers

from annotation.imports.published.datasets import DATASETS
from annotation.text.parsing import strict_json_loads


class MappingField(serializers.DictField):
    """Target name to column name, e.g. {"text": "Text", "label": "Sentiment"}; as JSON text in
    a form field."""

    child = serializers.CharField(max_length=200)

    def get_value(self, dictionary: Any) -> Any:
        return dictionary.get(self.field_name, serializers.empty)  # one JSON text in forms

    def to_internal_value(self, data: Any) -> dict[str, str]:
        if isinstance(data, str):
            try:
                data = strict_json_loads(data) if data.strip() else {}
            except ValueError as error:
                raise serializers.ValidationError(f"not valid JSON: {error}.") from None
        if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
            raise serializers.ValidationError("mapping must be an object of target: column.")
        return super().to_internal_value(data)


class ImportInputSerializer(serializers.Serializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=["jsonl", "csv", "tsv"], required=False)
    mapping = MappingField(required=False, default=dict)
    labels = MappingField(required=False, default=dict, help_text='e.g. {"Negative": "negative"}')
    split = serializers.ChoiceField(choices=["train", "dev", "test"], default="test")
    skip_bad = serializers.BooleanField(
        default=False, help_text="import the good rows; the bad lines are kept on the batch"
    )


class ImportResultSerializer(serializers.Serializer):
    batch = serializers.IntegerField()
    imported = serializers.IntegerField()
    skipped = serializers.IntegerField(help_text="lines left out (skip_bad)")


class SetImportSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=["sets_jsonl", "paired_tsv"])
    file = serializers.FileField(required=False)
    original = serializers.FileField(required=False)
    contrast = serializers.FileField(required=False)
    accept = serializers.BooleanField(default=False)
    author = serializers.RegexField(r"^[\w.-]{1,60}$", default="imported")
    mapping = MappingField(required=False, default=dict)
    labels = MappingField(required=False, default=dict, help_text='e.g. {"Negative": "negative"}')
    split = serializers.ChoiceField(choices=["train", "dev", "test"], default="test")
    strict = serializers.BooleanField(
        default=False, help_text="refuse edits that break the authoring rules, not just warn"
    )
    tags = serializers.ListField(child=serializers.CharField(), required=False, default=list)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        needed = ["file"] if attrs["format"] == "sets_jsonl" else ["original", "contrast"]
        missing = [name for name in needed if not attrs.get(name)]
        if missing:
            raise serializers.ValidationError({name: "This file is required." for name in missing})
        return attrs


class VoteImportInputSerializer(serializers.Serializer):
    file = serializers.FileField()


class PublishedImportSerializer(serializers.Serializer):
    dataset = serializers.ChoiceField(choices=list(DATASETS), help_text="docs/published/")
    file1 = serializers.FileField(help_text="the dataset's first file (the originals')")
    file2 = serializers.FileField(required=False)
    file3 = serializers.FileField(required=False, help_text="IMDb: dev_original.tsv")
    file4 = serializers.FileField(required=False, help_text="IMDb: dev_contrast.tsv")
    to_validation = serializers.BooleanField(
        default=False, help_text="send the sets to validation instead of accepting them"
    )


class NewProjectSlugSerializer(serializers.Serializer):
    slug = serializers.SlugField(
        max_length=64,
        required=False,
        help_text="the new project's slug; the dataset's key when left out",
    )
    name = serializers.RegexField(
        r"\S",
        max_length=200,
        required=False,
        help_text="the new project's name, unique whatever its case; the dataset's template's "
        "(e.g. IMDb contrast sets) when left out",
    )


class NewProjectPublishedImportSerializer(PublishedImportSerializer, NewProjectSlugSerializer):
    pass


class MovedSerializer(serializers.Serializer):
    """An old route's answer (308, for one release): where the operation lives now."""

    detail = serializers.CharField()
    location = serializers.CharField(help_text="the new route, also in the Location header")


class LineErrorSerializer(serializers.Serializer):
    line = serializers.IntegerField(allow_null=True, help_text="null: the whole file")
    message = serializers.CharField()


class WarningRowSerializer(LineErrorSerializer):
    """A row of an import's warnings, grouped by kind: the rows' counts add up to
    warning_count."""

    count = serializers.IntegerField(help_text="the warnings this row stands for")
    places = serializers.ListField(
        child=serializers.CharField(),
        help_text="where each is: the dataset's id with its line ('<id> (line 11)'), a line, "
        "or a record of a JSON file; empty for a warning about the whole file",
    )


class SetsResultSerializer(serializers.Serializer):
    """Sets imported: what was created, what was already there, and what is kept with a
    warning (grouped; every one is on the batch)."""

    perturbations = serializers.IntegerField()
    already_present = serializers.IntegerField()
    warnings = WarningRowSerializer(many=True)
    warning_count = serializers.IntegerField(help_text="warnings before grouping")
    batch = serializers.IntegerField(
        help_text="the import batch: DELETE …/batches/{batch}/ undoes it"
    )


class VotesResultSerializer(serializers.Serializer):
    imported = serializers.IntegerField()
    already_present = serializers.IntegerField()


class SetCountsSerializer(serializers.Serializer):
    sets = serializers.IntegerField()
    perturbations = serializers.IntegerField()


class PaperCountsSerializer(serializers.Serializer):
    sets = serializers.IntegerField()
    examples = serializers.IntegerField()


class PublishedResultSerializer(serializers.Serializer):
    """A published contrast set imported, with its counts beside the paper's."""

    project = serializers.CharField()
    project_created = serializers.BooleanField()
    counts = serializers.DictField(child=SetCountsSerializer(), help_text="per split")
    test = PaperCountsSerializer(help_text="the test split's sets and examples")
    paper = PaperCountsSerializer(help_text="as Gardner et al. (2020) count them")
    matches_paper = serializers.BooleanField()
    perturbations = serializers.IntegerField()
    already_present = serializers.IntegerField()
    warnings = WarningRowSerializer(many=True)
    warning_count = serializers.IntegerField()
    batch = serializers.IntegerField()
    notes = serializers.ListField(child=serializers.CharField())
    left_out = serializers.IntegerField(
        help_text="rows of the files left out (the batch's skipped lines), as the dataset's "
        "own script leaves them out"
    )
    summary = serializers.CharField(help_text="the counts beside the paper's, in a sentence")


class ImportJobSerializer(serializers.Serializer):
    """A background import: its status, and once finished its answer (`result`, as the
    import in the request would have answered) or its `errors`."""

    job = serializers.IntegerField(source="pk")
    kind = serializers.CharField()
    status = serializers.CharField()
    result = serializers.JSONField(help_text="the import's answer, once it succeeded")
    errors = LineErrorSerializer(many=True)  # type: ignore[assignment]  # popped by DRF
    error = serializers.CharField(
        help_text="why it failed; when the file is not at fault, `errors` is empty"
    )
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
