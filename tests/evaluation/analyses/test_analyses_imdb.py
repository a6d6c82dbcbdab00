"""Analyses on the real IMDb contrast sets (Gardner et al., 2020), through the API: instability
over six runs, artifacts, and inoculation of a small model."""

import json
import math
import re
from collections import Counter
from statistics import NormalDist

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from evaluation.analyses import inoculation
from evaluation.analyses.execute import run_analysis
from evaluation.models import ModelSpec
from evaluation.runs.execute import run_evaluation
from evaluation.runs.services import evaluation_enqueue
from tests.evaluation.analyses.test_analyses import brute_force

pytestmark = pytest.mark.django_db
MAPPING = {"negative": "Negative", "positive": "Positive"}


@pytest.fixture
def imdb(shared_data, project, people, client_for, settings, tmp_path):  # type: ignore[no-untyped-def]
    """The IMDb dev and test contrast sets, imported as published and released."""
    settings.MEDIA_ROOT = tmp_path / "media"
    admin = client_for(people["admin"])
    return imdb_release(shared_data, project, admin), admin


def imdb_release(shared_data, project, admin) -> int:  # type: ignore[no-untyped-def]
    """The IMDb dev and test contrast sets imported as published into `project` through the
    API, accepted and released: the release's id."""
    project.labels = ["Positive", "Negative"]
    project.save()
    for split in ("dev", "test"):
        files = {
            role: SimpleUploadedFile(path.name, path.read_bytes())
            for role in ("original", "contrast")
            if (path := shared_data / "imdb-contrast" / f"{split}_{role}.tsv")
        }
        response = admin.post(f"/api/projects/{project.slug}/import/sets/", {
            "format": "paired_tsv", "split": split, "accept": "true", "tags": "negation",
            "mapping": json.dumps({"text": "Text", "label": "Sentiment"}), **files,
        }, format="multipart")  # fmt: skip
        assert response.status_code == 201, response.json()
    release = admin.post(f"/api/projects/{project.slug}/releases/", {"version": "1"}, format="json")
    assert release.status_code == 201, release.json()
    return int(release.json()["id"])


def test_instability_over_six_runs_equals_an_independent_decomposition(project, imdb):
    release, admin = imdb
    runs = []
    for seed in range(6):
        spec = ModelSpec.objects.create(
            project=project, name=f"lexicon-{seed}", kind="python", label_mapping=MAPPING,
            source=f"tests.evaluation.rule_models:lexicon_{seed}",
        )  # fmt: skip
        run = evaluation_enqueue(release=spec.project.releases.get(pk=release), model=spec,
                                 split="test", user=None, send=False)  # fmt: skip
        assert run_evaluation(run.pk).status == "succeeded"
        runs.append(run)
    created = admin.post("/api/analyses/", {"kind": "instability", "runs": [r.pk for r in runs]},
                         format="json")  # fmt: skip
    assert created.status_code == 202, created.json()
    run_analysis(created.json()["id"])
    result = admin.get(f"/api/analyses/{created.json()['id']}/").json()["result"]
    for role in ("original", "perturbed"):
        correct = np.array([
            [p.label == p.gold for p in run.predictions.filter(role=role).order_by("example")]
            for run in runs
        ], dtype=float)  # fmt: skip
        independent, covariance = brute_force(correct)
        assert result[role]["n"] == 488 and result[role]["k"] == 6
        assert result[role]["independent"] == pytest.approx(independent, abs=1e-12)
        assert result[role]["covariance"] == pytest.approx(covariance, abs=1e-12)
        assert result[role]["variance"] == pytest.approx(np.var(correct.mean(axis=1), ddof=1))


def test_artifacts_list_tokens_whose_z_is_recomputed_by_hand(shared_data, imdb):
    release, admin = imdb
    created = admin.post("/api/analyses/", {"kind": "artifacts", "release": release}, format="json")
    assert created.status_code == 202, created.json()
    result = run_analysis(created.json()["id"]).result
    contrast = (shared_data / "imdb-contrast" / "test_contrast.tsv").read_text().splitlines()[1:]
    rows = [line.split("\t", 1) for line in contrast]
    texts = [{t for t in re.findall(r"[^\W\d_]+", text.lower())} for _, text in rows]
    labels = [label for label, _ in rows]
    assert result["texts"] == 488 and result["tokens"]
    m = len(set().union(*texts))
    threshold = NormalDist().inv_cdf(1 - 0.05 / m)
    for row in result["tokens"][:10]:
        having = [
            label for tokens, label in zip(texts, labels, strict=True) if row["token"] in tokens
        ]
        share = Counter(having)[row["label"]] / len(having)
        z = (share - 0.5) / math.sqrt(0.25 / len(having))
        assert (row["count"], row["p_label"]) == (len(having), pytest.approx(share))
        assert row["z"] == pytest.approx(z) and z > threshold


def test_inoculation_of_a_small_model_on_imdb(project, imdb, tiny_model):
    release, admin = imdb
    spec = ModelSpec.objects.create(
        project=project, name="tiny", source=str(tiny_model),
        kind="hf-sequence-classification", label_mapping=MAPPING,
    )  # fmt: skip
    created = admin.post("/api/analyses/", {
        "kind": "inoculation", "release": release, "model": spec.pk, "pool_split": "dev",
        "sizes": [0, 20], "learning_rates": [1e-3, 3e-3], "max_epochs": 2,
    }, format="json")  # fmt: skip
    assert created.status_code == 202, created.json()
    analysis = run_analysis(created.json()["id"])
    assert analysis.status == "succeeded", analysis.error
    r = analysis.result
    assert len(r["points"]) == 4 and r["pool_sets"] == 100
    best = inoculation.best_point(r["points"])
    assert inoculation.outcome(r["before"], best, 2.0)["outcome"] == r["outcome"]
