from rest_framework import serializers

from annotation.models import Release


class ReleaseInputSerializer(serializers.Serializer):
    version = serializers.CharField(max_length=32)
    split_strategy = serializers.ChoiceField(choices=["pivot", "random"], default="pivot")
    seed = serializers.IntegerField(default=0)
    proportions = serializers.DictField(child=serializers.FloatField(), required=False)
    min_agreement = serializers.DictField(child=serializers.IntegerField(), required=False)


class ReleaseOutputSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.slug")
    created_by = serializers.CharField(source="created_by.username", default=None)
    download = serializers.SerializerMethodField()

    class Meta:
        model = Release
        fields = [
            "id", "project", "version", "created_by", "created_at", "options", "counts",
            "statistics", "manifest", "sha256", "download",
        ]  # fmt: skip

    def get_download(self, release: Release) -> str:
        return f"/api/releases/{release.pk}/download/?format=zip"
