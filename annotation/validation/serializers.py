from rest_framework import serializers


class NextItemSerializer(serializers.Serializer):
    """Everything a validator sees of an item: its fields and the choices. Nothing else."""

    item = serializers.IntegerField()
    fields = serializers.JSONField()  # type: ignore[assignment]  # popped by DRF
    labels = serializers.ListField(child=serializers.CharField())
    extra_labels = serializers.ListField(child=serializers.CharField())
    flags = serializers.ListField(child=serializers.CharField())


class VoteInputSerializer(serializers.Serializer):
    label = serializers.CharField()  # type: ignore[assignment]  # popped by DRF
    flags = serializers.ListField(child=serializers.CharField(), default=list)
    seconds_spent = serializers.IntegerField(min_value=0, default=0)


class VoteOutputSerializer(serializers.Serializer):
    item = serializers.IntegerField(source="item_id")
    label = serializers.CharField()  # type: ignore[assignment]  # popped by DRF
    flags = serializers.ListField(child=serializers.CharField())


class AdjudicateSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["accept", "reject"])


class QualifySerializer(serializers.Serializer):
    qualified = serializers.BooleanField()
