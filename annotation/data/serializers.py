"""The Data API's answers and requests, so that the OpenAPI schema describes each."""

from typing import Any

from rest_framework import serializers

from annotation.data.selectors import KINDS
from annotation.data.services.actions import ACTIONS, MAX_MATCHING, MAX_SELECTION


class RecordSerializer(serializers.Serializer):
    """A perturbation or an original, as records.py writes it (fields per kind)."""

    kind = serializers.ChoiceField(choices=["perturbation", "original"])
    id = serializers.IntegerField()
    fields = serializers.DictField(child=serializers.CharField())  # type: ignore[assignment]
    split = serializers.CharField()
    label = serializers.CharField(allow_blank=True)  # type: ignore[assignment]
    answers = serializers.ListField(child=serializers.JSONField())
    batch = serializers.IntegerField(allow_null=True)
    release_id = serializers.CharField(required=False)
    original = serializers.CharField(required=False)
    original_id = serializers.IntegerField(required=False)
    author = serializers.CharField(required=False)
    status = serializers.CharField(required=False)
    majority_label = serializers.CharField(required=False, allow_blank=True)
    votes = serializers.DictField(child=serializers.IntegerField(), required=False)
    counted_votes = serializers.IntegerField(required=False)
    tags = serializers.ListField(child=serializers.CharField(), required=False)
    updated_at = serializers.DateTimeField(required=False)
    external_id = serializers.CharField(required=False)
    waits_for_answer = serializers.BooleanField(required=False)
    perturbations = serializers.IntegerField(required=False, allow_null=True)
    control = serializers.JSONField(required=False, allow_null=True)


class ItemPageSerializer(serializers.Serializer):
    results = RecordSerializer(many=True)
    count = serializers.IntegerField(help_text="rows that match, counted up to 10,000")
    count_is_lower_bound = serializers.BooleanField()
    next = serializers.URLField(allow_null=True, help_text="the next page (keyset: ?after=id)")


class EventSerializer(serializers.Serializer):
    at = serializers.DateTimeField(allow_null=True)
    who = serializers.CharField()
    what = serializers.CharField()
    detail = serializers.CharField(allow_blank=True)


class ItemDetailSerializer(serializers.Serializer):
    record = RecordSerializer()
    history = EventSerializer(many=True)


class BulkSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=ACTIONS)
    kind = serializers.ChoiceField(choices=KINDS, default="perturbations")
    ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
        allow_empty=False,
        min_length=1,
        max_length=MAX_SELECTION,
        required=False,
        help_text="the rows to act on; or give filters",
    )
    filters = serializers.DictField(
        child=serializers.CharField(allow_blank=True, max_length=200),
        required=False,
        help_text="instead of ids: every row that these filters of GET …/items/ match "
        f"(at most {MAX_MATCHING}), read in the action's transaction",
    )
    expected = serializers.IntegerField(
        required=False,
        min_value=0,
        help_text="a delete by filters: how many rows you expect to match; 409 when they differ",
    )
    reason = serializers.CharField(required=False, allow_blank=True, max_length=1000)
    tag = serializers.CharField(required=False, max_length=100)
    clear_votes = serializers.BooleanField(default=False)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if ("ids" in data) == ("filters" in data):
            raise serializers.ValidationError("Give ids or filters, one of them.")
        return data


class BulkResultSerializer(serializers.Serializer):
    done = serializers.IntegerField()
    left = serializers.DictField(child=serializers.IntegerField(), help_text="{reason: rows}")
    details = serializers.DictField()


class RemovalSerializer(serializers.Serializer):
    originals = serializers.IntegerField()
    perturbations = serializers.IntegerField()
    items = serializers.IntegerField(help_text="validation items, controls included")
    controls = serializers.IntegerField(help_text="of the items, the originals' control items")
    votes = serializers.IntegerField()
    kept = serializers.DictField(child=serializers.IntegerField(), help_text="{release: kept}")


class AuditEntrySerializer(serializers.Serializer):
    at = serializers.DateTimeField(source="created_at")
    actor = serializers.CharField(source="actor.username", allow_null=True, default=None)
    action = serializers.CharField()
    details = serializers.DictField()
