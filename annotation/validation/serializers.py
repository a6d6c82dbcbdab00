from typing import Any

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from annotation.models.config import MAX_SECONDS_SPENT


class NextItemSerializer(serializers.Serializer):
    """Everything a validator sees of an item: its fields and the choices. Nothing else.
    Free-text projects have no labels: the validator types an answer, or picks an extra one."""

    item = serializers.IntegerField()
    fields = serializers.JSONField()  # type: ignore[assignment]  # popped by DRF
    fields_html = serializers.DictField(
        child=serializers.CharField(),
        help_text="each field as the page shows it: escaped text, sanitised HTML, or an image",
    )
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
    done = serializers.IntegerField(
        help_text="the items you have answered in this project now, this vote included "
        "(the Validate page's count)"
    )
    next = NextItemSerializer(allow_null=True)


class AdjudicateSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["accept", "reject", "reopen"])


class QualifySerializer(serializers.Serializer):
    """One of the two: `qualified`, or `action`."""

    qualified = serializers.BooleanField(
        required=False,
        help_text="true requalifies (and resumes a paused validator), false unqualifies",
    )
    action = serializers.ChoiceField(
        choices=["retest"],
        required=False,
        help_text="retest: one more attempt at the qualification test, for a validator who "
        "failed it (409 otherwise)",
    )


class AdjudicatedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()


class QualifiedSerializer(serializers.Serializer):
    validator = serializers.CharField()
    qualified = serializers.BooleanField()
    qualification = serializers.CharField(
        allow_null=True,
        help_text="the test's outcome now: pending, passed, failed; null without a test",
    )


class ValidatorFiguresSerializer(serializers.Serializer):
    """One validator's row of the Validators page."""

    id = serializers.IntegerField()
    validator = serializers.CharField()
    votes = serializers.IntegerField()
    resolved_votes = serializers.IntegerField()
    agreement = serializers.FloatField(allow_null=True)
    qualified = serializers.BooleanField()
    median_seconds = serializers.FloatField(allow_null=True)
    qualification = serializers.ChoiceField(
        choices=["pending", "passed", "failed"],
        allow_null=True,
        help_text="the qualification test: null in a project without one",
    )
    gold_seen = serializers.IntegerField(help_text="gold items answered while working")
    gold_accuracy = serializers.FloatField(allow_null=True)
    paused = serializers.BooleanField(help_text="paused by the gold checks")


class AgreementSerializer(serializers.Serializer):
    """Agreement over the counted votes of open and resolved items (docs/metrics.md); null
    where it is not defined (a kappa with one vote per item, say)."""

    items = serializers.IntegerField()
    fleiss_kappa = serializers.FloatField(allow_null=True)
    krippendorff_alpha = serializers.FloatField(allow_null=True)
    human_f1 = serializers.JSONField(
        help_text="macro and per_label F1 of a vote against its majority"
    )


class AnswerAgreementSerializer(AgreementSerializer):
    """Free text: how often a majority formed, and the answers' pairwise agreement."""

    majority_share = serializers.FloatField(allow_null=True)
    mean_pairwise_f1 = serializers.FloatField(allow_null=True)
    pairs = serializers.IntegerField()


class StatsSerializer(AgreementSerializer):
    """The Dashboard's figures: agreement overall and per split, the charts' counts, and who
    did what."""

    # Tells the two shapes apart in the schema's oneOf (an answer project's figures are a
    # superset of a label project's, so without it they would match both).
    shape = serializers.SerializerMethodField()
    per_split = serializers.DictField(child=AgreementSerializer())
    label_distribution = serializers.JSONField(help_text="votes and majorities per label")
    agreement_histogram = serializers.JSONField(help_text="resolved items by agreeing votes")
    votes_per_item = serializers.JSONField(help_text="items by counted votes")
    items = serializers.DictField(child=serializers.IntegerField(), help_text="per status")  # type: ignore[assignment]
    perturbations = serializers.DictField(child=serializers.IntegerField(), help_text="per status")
    human_accuracy = serializers.JSONField(help_text="the majority's accuracy on control items")
    tags = serializers.JSONField(help_text="each tag's perturbations against its target")
    validators = ValidatorFiguresSerializer(many=True)  # type: ignore[assignment]  # popped by DRF
    experts = serializers.JSONField(help_text="each expert's perturbations and their outcomes")
    median_seconds = serializers.JSONField(help_text="median seconds per perturbation and per vote")

    @extend_schema_field({"type": "string", "enum": ["labels"]})
    def get_shape(self, figures: dict[str, Any]) -> str:
        return "labels"


class AnswerStatsSerializer(StatsSerializer, AnswerAgreementSerializer):
    """A free-text project's figures."""

    per_split = serializers.DictField(child=AnswerAgreementSerializer())

    @extend_schema_field({"type": "string", "enum": ["answers"]})
    def get_shape(self, figures: dict[str, Any]) -> str:
        return "answers"


STATS = PolymorphicProxySerializer(
    component_name="ProjectStats",
    serializers=[StatsSerializer, AnswerStatsSerializer],
    resource_type_field_name=None,
)
