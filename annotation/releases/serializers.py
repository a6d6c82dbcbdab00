from typing import Any

from rest_framework import serializers

from annotation.models import Release
from annotation.releases.power import release_power


class SplitSharesSerializer(serializers.Serializer):
    """Each split's share of a random split; the shares add up to 1."""

    train = serializers.FloatField(min_value=0, max_value=1, required=False)
    dev = serializers.FloatField(min_value=0, max_value=1, required=False)
    test = serializers.FloatField(min_value=0, max_value=1, required=False)


class SplitVotesSerializer(serializers.Serializer):
    """Each split's minimum of agreeing votes, at most the project's votes per item."""

    train = serializers.IntegerField(min_value=0, required=False)
    dev = serializers.IntegerField(min_value=0, required=False)
    test = serializers.IntegerField(min_value=0, required=False)


class ReleaseInputSerializer(serializers.Serializer):
    version = serializers.CharField(max_length=32)
    split_strategy = serializers.ChoiceField(choices=["pivot", "random"], default="pivot")
    seed = serializers.IntegerField(default=0)
    proportions = SplitSharesSerializer(required=False)
    min_agreement = SplitVotesSerializer(required=False)
    include_comments = serializers.BooleanField(
        default=False, help_text="add comments.jsonl: the comments on its perturbations, unnamed"
    )


class ReleaseOutputSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.slug")
    created_by = serializers.CharField(source="created_by.username", default=None)
    download = serializers.SerializerMethodField()
    power = serializers.SerializerMethodField(
        help_text="per split: consistency's 95% half-width, and per discordance between two "
        "runs the smallest difference in consistency McNemar's test detects (alpha 0.05, "
        "power 0.8) and the sets a 5-point difference needs (docs/metrics.md)"
    )

    class Meta:
        model = Release
        fields = [
            "id",
            "project",
            "version",
            "created_by",
            "created_at",
            "options",
            "counts",
            "statistics",
            "manifest",
            "sha256",
            "download",
            "power",
        ]

    def get_download(self, release: Release) -> str:
        return f"/api/releases/{release.pk}/download/?format=zip"

    def get_power(self, release: Release) -> dict[str, Any]:
        return release_power(release.counts)


class RelabelledSerializer(serializers.Serializer):
    """A perturbation in both releases whose label (or answers) changed."""

    def get_fields(self) -> dict[str, serializers.Field]:  # "from" is a Python keyword
        return {
            "id": serializers.CharField(),
            "from": serializers.JSONField(),
            "to": serializers.JSONField(),
        }


class ReleaseDiffSerializer(serializers.Serializer):
    """What changed from one release (`from`) to another (`to`): sets and perturbations by
    their released ids, labels (or answers), and files whose bytes differ."""

    def get_fields(self) -> dict[str, serializers.Field]:  # "from" is a Python keyword
        names = ("sets_added", "sets_removed", "perturbations_added", "perturbations_removed")
        return {
            "from": serializers.CharField(),
            "to": serializers.CharField(),
            **{name: serializers.ListField(child=serializers.CharField()) for name in names},
            "relabelled": RelabelledSerializer(many=True),
            "files_changed": serializers.ListField(child=serializers.CharField()),
        }
