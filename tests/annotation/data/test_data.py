"""The Data API (docs/data.md): rows filtered and paged by keyset, one row's history, bulk
actions, the undo of an import, deleting a project, and the audit log. The expected rows and
counts are built by each test from what it made, never read from the code under test."""

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import Q

from annotation.models import (
    AuditLog,
    Example,
    Perturbation,
    Project,
    ValidationItem,
    ValidatorStatus,
    Vote,
)
from tests.annotation.imports.test_published_real import real
from tests.conftest import SHARED_DATA
from tests.factories import ExampleFactory, member, submitted_perturbation, vote_all

pytestmark = pytest.mark.django_db

CAD = SHARED_DATA / "cad-sentiment"


@pytest.fixture
def validators(project):  # type: ignore[no-untyped-def]
    return [member(project, f"val{n}", "validator") for n in range(5)]


def snapshot(project: Project) -> dict[str, object]:
    """Everything an undo must leave as it was."""
    return {
        "examples": sorted(Example.objects.filter(project=project).values_list("pk", flat=True)),
        "perturbations": sorted(project.perturbations.values_list("pk", "status")),
        "items": sorted(ValidationItem.objects.filter(project=project).values_list(
            "pk", "status", "counted_votes")),
        "votes": sorted(Vote.objects.filter(item__project=project).values_list("pk", flat=True)),
        "counters": sorted(ValidatorStatus.objects.filter(project=project).values_list(
            "validator__username", "resolved_votes", "agreed_votes", "qualified")),
    }  # fmt: skip


def release_bytes(release) -> str:  # type: ignore[no-untyped-def]
    return hashlib.sha256((Path(django_settings.MEDIA_ROOT) / release.bundle).read_bytes()).hexdigest()


def import_cad_dev(client, project):  # type: ignore[no-untyped-def]
    """CAD's dev reviews and their revisions as paired sets, sent to validation."""
    folder = real(CAD)
    original, contrast = folder / "orig" / "dev.tsv", folder / "new" / "dev.tsv"
    return client.post(
        f"/api/projects/{project.slug}/import/sets/",
        {"format": "paired_tsv",
         "original": SimpleUploadedFile("orig-dev.tsv", original.read_bytes()),
         "contrast": SimpleUploadedFile("new-dev.tsv", contrast.read_bytes()),
         "mapping": json.dumps({"text": "Text", "label": "Sentiment"}),
         "labels": json.dumps({"Positive": "positive", "Negative": "negative"}),
         "tags": "negation"},
        format="multipart",
    )  # fmt: skip


def test_cads_import_is_undone_whole_and_nothing_else_changes(
    project, people, validators, released, client_for
):
    # Before the import: a release, and a perturbation resolved by five votes.
    earlier = submitted_perturbation(project, people["expert"])
    vote_all(earlier.item, validators, ["negative"] * 4 + ["positive"])
    before, release_sha = snapshot(project), release_bytes(released)
    admin = client_for(people["admin"])
    response = import_cad_dev(admin, project)
    assert response.status_code == 201, response.json()
    batch = response.json()["batch"]
    rows = (real(CAD) / "orig" / "dev.tsv").read_text().count("\n") - 1
    added = Perturbation.objects.filter(batch_id=batch)
    assert added.count() == rows == 245
    # Validators start on the new items: one resolves, and their agreement counts move.
    item = added.first().item
    vote_all(item, validators, ["negative", "negative", "negative", "positive", "positive"])
    assert snapshot(project)["counters"] != before["counters"]
    new_items = ValidationItem.objects.filter(
        Q(perturbation__batch_id=batch) | Q(control__batch_id=batch)
    ).count()

    response = admin.delete(f"/api/projects/{project.slug}/imports/{batch}/")
    assert response.status_code == 200, response.json()
    assert response.json() == {
        "originals": rows, "perturbations": rows, "items": new_items, "votes": 5, "kept": {},
    }  # fmt: skip
    assert snapshot(project) == before
    assert release_bytes(released) == release_sha
    assert admin.get(f"/api/releases/{released.pk}/download/").status_code == 200
    entry = AuditLog.objects.get(action="import_undone")
    assert (entry.actor, entry.details["originals"], entry.details["votes"]) == (
        people["admin"], rows, 5,
    )  # fmt: skip
