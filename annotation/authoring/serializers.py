from typing import Any

from django.conf import settings
from rest_framework import serializers

from annotation.models import Example
from annotation.models.config import MAX_SECONDS_SPENT
from annotation.validation.services.votes import vote_counts


class PivotSerializer(serializers.Serializer):
    id = serializers.CharField(source="external_id")
    fields = serializers.JSONField()  # type: ignore[assignment]  # popped by DRF
    label = serializers.CharField()  # type: ignore[assignment]  # popped by DRF
    answers = serializers.ListField(child=serializers.CharField())
    split = serializers.CharField()
    perturbations = serializers.IntegerField(source="n_perturbations")
    claimed_by = serializers.SerializerMethodField()

    def get_claimed_by(self, example: Example) -> str | None:
        """ "me", "someone", or null: experts see that a pivot is taken, not by whom."""
        holder = getattr(example, "live_claim_expert_id", None)
        if holder is None:
            return None
        return "me" if holder == self.context["request"].user.pk else "someone"


class ClaimOutputSerializer(serializers.Serializer):
    pivot = serializers.CharField(source="example.external_id")
    expires_at = serializers.DateTimeField()


class SampleInputSerializer(serializers.Serializer):
    split = serializers.ChoiceField(choices=["train", "dev", "test"], default="test")
    strategy = serializers.ChoiceField(choices=["random", "balanced"], default="random")


class PerturbationInputSerializer(serializers.Serializer):
    pivot = serializers.CharField(required=False)
    fields = serializers.DictField(
        child=serializers.CharField(allow_blank=True, trim_whitespace=False), required=False
    )  # type: ignore[assignment]  # popped by DRF
    label = serializers.CharField(allow_blank=True, required=False)  # type: ignore[assignment]
    answers = serializers.ListField(
        child=serializers.CharField(allow_blank=True, max_length=2000),
        required=False,
        max_length=20,
    )
    tags = serializers.ListField(child=serializers.CharField(), required=False)
    rationale = serializers.CharField(
        allow_blank=True,
        required=False,
        trim_whitespace=False,
        max_length=settings.IMPORT_MAX_FIELD_CHARS,
    )
    seconds_spent = serializers.IntegerField(
        min_value=0, max_value=MAX_SECONDS_SPENT, required=False
    )
    submit = serializers.BooleanField(default=False)
    status = serializers.ChoiceField(choices=["withdrawn"], required=False)
    allow_large_edit = serializers.BooleanField(required=False)


class PerturbationCreateSerializer(PerturbationInputSerializer):
    """A new perturbation names the original it changes (its id as it is, spaces included)."""

    pivot = serializers.CharField(trim_whitespace=False)


class PerturbationOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    pivot = serializers.CharField(source="pivot.external_id")
    fields = serializers.JSONField()  # type: ignore[assignment]  # popped by DRF
    label = serializers.CharField()  # type: ignore[assignment]  # popped by DRF
    answers = serializers.ListField(child=serializers.CharField())
    tags = serializers.SerializerMethodField()
    rationale = serializers.CharField()
    status = serializers.CharField()
    seconds_spent = serializers.IntegerField()
    guideline_version = serializers.IntegerField()
    edit_distance = serializers.FloatField()
    allow_large_edit = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    outcome = serializers.SerializerMethodField()

    def get_tags(self, perturbation: Any) -> list[str]:
        return [tag.name for tag in perturbation.tags.all()]

    def get_outcome(self, perturbation: Any) -> dict[str, Any] | None:
        """The vote outcome, shown to the author only once the item is resolved."""
        if not perturbation.is_resolved:
            return None
        outcome = {
            "majority_label": perturbation.majority_label or None,
            "votes": vote_counts(perturbation),
        }
        if perturbation.project.is_free_text:
            outcome["majority_answers"] = perturbation.majority_answers
        return outcome
