from typing import Any

from rest_framework import serializers

from annotation.models import Project
from annotation.models.config import FIELD_KINDS, MAX_TAG_TARGET, settings_without_answers

# A name or label holds a character that is not a space (their spaces around are trimmed): the
# schema says so, so that " " is refused as the schema's, not by a rule it does not state.
VISIBLE = r"\S"


class FieldSpecSerializer(serializers.Serializer):
    name = serializers.RegexField(VISIBLE)
    kind = serializers.ChoiceField(choices=list(FIELD_KINDS), default="text")
    editable = serializers.BooleanField(default=True)


class TagSerializer(serializers.Serializer):
    name = serializers.RegexField(VISIBLE, max_length=64)
    description = serializers.CharField(allow_blank=True, default="")
    target = serializers.IntegerField(
        min_value=0, max_value=MAX_TAG_TARGET, allow_null=True, required=False
    )
    # Any JSON values, as the schema says (null included): opaque to the product.
    example_edits = serializers.ListField(
        child=serializers.JSONField(allow_null=True), required=False
    )


class ProjectInputSerializer(serializers.Serializer):
    name = serializers.RegexField(VISIBLE, max_length=200)
    slug = serializers.SlugField(max_length=64)
    task_type = serializers.ChoiceField(choices=Project.TaskType.choices, default="classification")
    fields = FieldSpecSerializer(many=True)  # type: ignore[assignment]  # popped by DRF
    labels = serializers.ListField(child=serializers.RegexField(VISIBLE, max_length=100))
    extra_labels = serializers.ListField(
        child=serializers.RegexField(VISIBLE, max_length=100), default=list
    )
    tags = TagSerializer(many=True, default=list)
    guidelines = serializers.CharField(allow_blank=True, default="")
    settings = serializers.DictField(default=dict)

    def validate_slug(self, slug: str) -> str:
        if Project.objects.filter(slug=slug).exists():
            raise serializers.ValidationError("a project with this slug exists.")
        return slug


class ProjectUpdateSerializer(ProjectInputSerializer):
    slug = None  # type: ignore[assignment]  # fixed: a PATCH that names another is refused


class ProjectOutputSerializer(serializers.ModelSerializer):
    tags = serializers.SerializerMethodField()
    guidelines = serializers.SerializerMethodField()
    guideline_version = serializers.SerializerMethodField()
    roles = serializers.SerializerMethodField()
    settings = serializers.SerializerMethodField(
        help_text="to members who are not admins, the qualification questions without their "
        "label or answers"
    )

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

    def get_settings(self, project: Project) -> dict[str, Any]:
        if "admin" in getattr(project, "user_roles", ()):
            return project.settings
        return settings_without_answers(project.settings)

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
