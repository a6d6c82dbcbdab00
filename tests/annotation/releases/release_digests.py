"""Not a test: a tool that records the SHA-256 of every file of releases built from the tests'
fixtures and the real data in ../shared/data (the published contrast sets, imported in one
step, on both of the release's paths where a project takes both), to check that a change to
the release writer leaves the bundles byte for byte as they were.

    DIGESTS=/tmp/before.json DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> \
        .venv/bin/pytest --create-db -p no:randomly -q tests/annotation/releases/release_digests.py

then the same into another file, and compare the two JSON files. A fresh database (--create-db)
keeps the perturbations' ids, which a release names where a perturbation has no id of its own,
the same from run to run. Only the card's date differs between days."""

import hashlib
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest
from django.conf import settings

from annotation.imports.published.services import import_published
from annotation.models import Release
from annotation.releases import copied
from annotation.releases.members import Members
from annotation.releases.services import release_create
from tests.annotation.releases.test_copied import nli_project
from tests.conftest import SHARED_DATA
from tests.evaluation.runs import test_minimal_pairs as pairs_tests
from tests.factories import UserFactory

GARDNER = SHARED_DATA / "gardner-contrast-sets"
PUBLISHED = {
    "imdb": [SHARED_DATA / "imdb-contrast" / f"{s}_{r}.tsv" for s in ("test", "dev")
             for r in ("original", "contrast")],
    "boolq": [GARDNER / "boolq_perturbed.json"],
    "matres": [GARDNER / "Platinum_subset_minimal_pairs.csv"],
    "mctaco": [GARDNER / "mctaco" / "original.tsv", GARDNER / "mctaco" / "changed.tsv"],
    "nlvr2": [GARDNER / "contrast_set_nlvr2.jsonl"],
    "perspectrum": [GARDNER / "perspectrum_contrast_sets.csv"],
    "quoref": [GARDNER / "quoref_original_subset_20191206_merged.json",
               GARDNER / "quoref_test_perturbations_20191206_merged.json"],
    "ropes": [GARDNER / "ropes_contrast_set_original_032820.json",
              GARDNER / "ropes_contrast_set_032820.json"],
}  # fmt: skip


def digests(release: Release) -> dict[str, str]:
    path = Path(settings.MEDIA_ROOT) / release.bundle
    with zipfile.ZipFile(path) as bundle:
        return {n: hashlib.sha256(bundle.read(n)).hexdigest() for n in sorted(bundle.namelist())}


def record(name: str, release: Release) -> None:
    out = Path(os.environ.get("DIGESTS", "/tmp/release_digests.json"))
    known = json.loads(out.read_text()) if out.exists() else {}
    known[name] = {"files": digests(release), "counts": release.counts}
    out.write_text(json.dumps(known, indent=1, sort_keys=True))
    if keep := os.environ.get("BUNDLES"):  # the bundles themselves, to compare file by file
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(settings.MEDIA_ROOT) / release.bundle, Path(keep) / f"{name}.zip")


def paths(project, version, monkeypatch, **options):  # type: ignore[no-untyped-def]
    """The release on each path the project takes: columns (where they apply), rows, and
    rows dict by dict."""
    ways = {"columns": {}} if copied.applies(project) else {}
    ways |= {"rows": {"applies": False}, "dicts": {"applies": False, "plain": False}}
    for way, patched in ways.items():
        with monkeypatch.context() as patch:
            if "applies" in patched:
                patch.setattr(copied, "applies", lambda project: False)
            if "plain" in patched:
                patch.setattr(Members, "plain", property(lambda self: False))
            yield (
                way,
                release_create(project=project, user=None, version=f"{version}-{way}", **options),
            )


@pytest.fixture
def media(db, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"min_agreement": {"dev": 3, "test": 0, "train": 0}},
        {"split_strategy": "random", "seed": 5, "proportions": {"train": 0.5, "test": 0.5}},
    ],
)
def test_nli(options, media, monkeypatch):  # type: ignore[no-untyped-def]
    project = nli_project()
    key = json.dumps(options, sort_keys=True)
    for way, release in paths(project, "1", monkeypatch, **options):
        record(f"nli {key} {way}", release)


@pytest.mark.parametrize("dataset", sorted(PUBLISHED))
def test_published(dataset, media, monkeypatch):  # type: ignore[no-untyped-def]
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    files = [(p.name, p.read_bytes()) for p in PUBLISHED[dataset]]
    project = import_published(dataset=dataset, files=files, user=root).project
    for way, release in paths(project, "1", monkeypatch):
        record(f"{dataset} {way}", release)


minimal_pair_release = pairs_tests.minimal_pair_release


def test_minimal_pairs(minimal_pair_release, monkeypatch):  # type: ignore[no-untyped-def]
    project = minimal_pair_release[0]
    for way, release in paths(project, "2", monkeypatch):
        record(f"minimal pairs {way}", release)
