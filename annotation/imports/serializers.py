from typing import Any

from rest_framework import serializers


class ImportInputSerializer(serializers.Serializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=["jsonl", "csv", "tsv"], required=False)
    mapping = serializers.JSONField(required=False, default=dict)
    split = serializers.ChoiceField(choices=["train", "dev", "test"], default="test")


class ImportResultSerializer(serializers.Serializer):
    batch = serializers.IntegerField()
    imported = serializers.IntegerField()


class LineErrorSerializer(serializers.Serializer):
    line = serializers.IntegerField(allow_null=True)
    message = serializers.CharField()


class ImportErrorsSerializer(serializers.Serializer):
    errors = LineErrorSerializer(many=True)  # type: ignore[assignment]  # popped by DRF


class SetImportSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=["sets_jsonl", "paired_tsv"])
    file = serializers.FileField(required=False)
    original = serializers.FileField(required=False)
    contrast = serializers.FileField(required=False)
    accept = serializers.BooleanField(default=False)
    author = serializers.RegexField(r"^[\w.-]{1,60}$", default="imported")
    mapping = serializers.JSONField(required=False, default=dict)
    split = serializers.ChoiceField(choices=["train", "dev", "test"], default="test")
    tags = serializers.ListField(child=serializers.CharField(), required=False, default=list)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        needed = ["file"] if attrs["format"] == "sets_jsonl" else ["original", "contrast"]
        missing = [name for name in needed if not attrs.get(name)]
        if missing:
            raise serializers.ValidationError({name: "This file is required." for name in missing})
        return attrs


class VoteImportInputSerializer(serializers.Serializer):
    file = serializers.FileField()
