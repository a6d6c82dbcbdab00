"""A release holds its perturbations' comments only when asked (`include_comments`, off by
default): comments.jsonl, in the manifest, with no names."""

import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from django.conf import settings

from annotation.comments.services import comment_posted
from annotation.models import Perturbation
from annotation.releases.services import release_create
from tests.factories import released_contrast_sets

pytestmark = pytest.mark.django_db


def bundle(release) -> zipfile.ZipFile:  # type: ignore[no-untyped-def]
    return zipfile.ZipFile(Path(settings.MEDIA_ROOT) / release.bundle)


@pytest.fixture
def commented(project, people, settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"
    released_contrast_sets(project, people)  # release 1.0, before any comment
    first = Perturbation.objects.filter(project=project).order_by("pk").first()
    comment_posted(perturbation=first, author=people["admin"], body="Why *bad*, @erin?")
    comment_posted(perturbation=first, author=people["expert"], body="It flips it.")
    return first


def test_a_release_leaves_comments_out_unless_asked(project, people, commented):  # type: ignore[no-untyped-def]
    plain = release_create(project=project, user=people["admin"], version="2.0")
    assert "comments.jsonl" not in bundle(plain).namelist()
    assert plain.options["include_comments"] is False
    asked = release_create(
        project=project, user=people["admin"], version="3.0", include_comments=True
    )
    with bundle(asked) as zipped:
        data = zipped.read("comments.jsonl")
        manifest = json.loads(zipped.read("manifest.json"))
    lines = [json.loads(line) for line in data.decode().splitlines()]
    assert [(line["perturbation"], line["by"], line["body"]) for line in lines] == [
        (f"p-{commented.pk}", "admin", "Why *bad*, @erin?"),
        (f"p-{commented.pk}", "author", "It flips it."),
    ]
    assert manifest["files"]["comments.jsonl"] == hashlib.sha256(data).hexdigest()
    assert "alice" not in data.decode() and 'erin"' not in data.decode()


def test_include_comments_is_true_or_false(project, people, commented, client_for):  # type: ignore[no-untyped-def]
    api = client_for(people["admin"])
    url = f"/api/projects/{project.slug}/releases/"
    refused = api.post(url, {"version": "4.0", "include_comments": "maybe"}, format="json")
    assert refused.status_code == 400
    made = api.post(url, {"version": "4.0", "include_comments": True}, format="json")
    assert made.status_code == 201
