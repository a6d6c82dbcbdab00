from typing import Any

from rest_framework import serializers

from annotation.models import Example, Project
from annotation.selectors import vote_counts


class FieldSpecSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["text", "image_url"], default="text")
    editable = serializers.BooleanField(default=True)


class TagSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=64)
    description = serializers.CharField(allow_blank=True, default="")
    target = serializers.IntegerField(min_value=0, allow_null=True, required=False)
    example_edits = serializers.ListField(child=serializers.JSONField(), required=False)


class ProjectInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=64)
    task_type = serializers.ChoiceField(choices=Project.TaskType.choices, default="classification")
    fields = FieldSpecSerializer(many=True)  # type: ignore[assignment]  # popped by DRF
    labels = serializers.ListField(child=serializers.CharField(max_length=100))
    extra_labels = serializers.ListField(child=serializers.CharField(max_length=100), default=list)
    tags = TagSerializer(many=True, default=list)
    guidelines = serializers.CharField(allow_blank=True, default="")
    settings = serializers.DictField(default=dict)

    def validate_slug(self, slug: str) -> str:
        if Project.objects.filter(slug=slug).exists():
            raise serializers.ValidationError("a project with this slug exists.")
        return slug


class ProjectUpdateSerializer(ProjectInputSerializer):
    def validate_slug(self, slug: str) -> str:
        raise serializers.ValidationError("the slug cannot change.")


class ProjectOutputSerializer(serializers.ModelSerializer):
    tags = serializers.SerializerMethodField()
    guidelines = serializers.SerializerMethodField()
    guideline_version = serializers.SerializerMethodField()
    roles = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = [
            "name",
            "slug",
            "task_type",
            "fields",
            "labels",
            "extra_labels",
            "tags",
            "guidelines",
            "guideline_version",
            "settings",
            "roles",
            "created_at",
        ]

    def get_tags(self, project: Project) -> list[dict[str, Any]]:
        return [
            {"name": t.name, "description": t.description, "target": t.target}
            for t in project.tags.all()
        ]

    def get_guidelines(self, project: Project) -> str:
        current = project.current_guidelines()
        return current.text if current else ""

    def get_guideline_version(self, project: Project) -> int:
        return project.current_guideline_version()

    def get_roles(self, project: Project) -> list[str]:
        return sorted(getattr(project, "user_roles", []))


class MemberInputSerializer(serializers.Serializer):
    username = serializers.CharField()
    roles = serializers.ListField(
        child=serializers.ChoiceField(choices=["admin", "expert", "validator"]), allow_empty=True
    )


class MemberOutputSerializer(serializers.Serializer):
    username = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())


class ImportInputSerializer(serializers.Serializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=["jsonl", "csv", "tsv"], required=False)
    mapping = serializers.JSONField(required=False, default=dict)
    split = serializers.ChoiceField(choices=["train", "dev", "test"], default="test")


class ExampleSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="external_id")

    class Meta:
        model = Example
        fields = ["id", "fields", "label", "split", "metadata"]


class ImportResultSerializer(serializers.Serializer):
    batch = serializers.IntegerField()
    imported = serializers.IntegerField()


class LineErrorSerializer(serializers.Serializer):
    line = serializers.IntegerField(allow_null=True)
    message = serializers.CharField()


class ImportErrorsSerializer(serializers.Serializer):
    errors = LineErrorSerializer(many=True)  # type: ignore[assignment]  # popped by DRF


class PivotSerializer(serializers.Serializer):
    id = serializers.CharField(source="external_id")
    fields = serializers.JSONField()  # type: ignore[assignment]  # popped by DRF
    label = serializers.CharField()  # type: ignore[assignment]  # popped by DRF
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
    tags = serializers.ListField(child=serializers.CharField(), required=False)
    rationale = serializers.CharField(allow_blank=True, required=False, trim_whitespace=False)
    seconds_spent = serializers.IntegerField(min_value=0, required=False)
    submit = serializers.BooleanField(default=False)
    status = serializers.ChoiceField(choices=["withdrawn"], required=False)
    allow_large_edit = serializers.BooleanField(required=False)


class PerturbationOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    pivot = serializers.CharField(source="pivot.external_id")
    fields = serializers.JSONField()  # type: ignore[assignment]  # popped by DRF
    label = serializers.CharField()  # type: ignore[assignment]  # popped by DRF
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
        return {
            "majority_label": perturbation.majority_label or None,
            "votes": vote_counts(perturbation),
        }
