from rest_framework import serializers

from annotation.models.config import MAX_SECONDS_SPENT


class NextItemSerializer(serializers.Serializer):
    """Everything a validator sees of an item: its fields and the choices. Nothing else.
    Free-text projects have no labels: the validator types an answer, or picks an extra one."""

    item = serializers.IntegerField()
    fields = serializers.JSONField()  # type: ignore[assignment]  # popped by DRF
    labels = serializers.ListField(child=serializers.CharField())
    extra_labels = serializers.ListField(child=serializers.CharField())
    flags = serializers.ListField(child=serializers.CharField())


class VoteInputSerializer(serializers.Serializer):
    """A label; in free-text projects an answer, or an extra label such as unanswerable."""

    label = serializers.CharField(required=False, allow_blank=True, default="")  # type: ignore[assignment]
    answer = serializers.CharField(
        required=False, allow_blank=True, default="", trim_whitespace=False, max_length=2000
    )
    flags = serializers.ListField(child=serializers.CharField(), default=list)
    seconds_spent = serializers.IntegerField(min_value=0, max_value=MAX_SECONDS_SPENT, default=0)


class VoteOutputSerializer(serializers.Serializer):
    item = serializers.IntegerField(source="item_id")
    label = serializers.CharField()  # type: ignore[assignment]  # popped by DRF
    answer = serializers.CharField()
    flags = serializers.ListField(child=serializers.CharField())


class VoteResultSerializer(serializers.Serializer):
    vote = VoteOutputSerializer()
    next = NextItemSerializer(allow_null=True)


class AdjudicateSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["accept", "reject", "reopen"])


class QualifySerializer(serializers.Serializer):
    qualified = serializers.BooleanField()
