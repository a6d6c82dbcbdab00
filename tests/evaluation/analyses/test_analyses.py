"""Analyses (docs/metrics.md, docs/analyses.md): seed instability, artifacts and inoculation, from
the pure functions to the API, a real worker and cancellation."""

import math
import tempfile
import threading
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest
from django.db import connection
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from annotation import jobs
from annotation.models import Perturbation
from annotation.releases.bundle import read_examples
from annotation.releases.services import release_create
from evaluation.analyses import inoculation
from evaluation.analyses.artifacts import Edit, artifacts, token_artifacts
from evaluation.analyses.execute import run_analysis
from evaluation.analyses.instability import decompose
from evaluation.analyses.services import analysis_cancel, analysis_create
from evaluation.models import Analysis, EvaluationRun, ModelSpec, Prediction
from tests.factories import ExampleFactory, submitted_perturbation
from tests.workers import BROKER, start_worker, stop, wait_for, worker_env


def brute_force(correct: np.ndarray) -> tuple[float, float]:
    """Independent and covariance parts by definition: O(N²K) over every pair of units."""
    n = correct.shape[1]
    cov = np.atleast_2d(np.cov(correct.T, ddof=1))
    independent = float(np.trace(cov)) / n**2
    covariance = 2 * sum(cov[i, j] for i in range(n) for j in range(i + 1, n)) / n**2
    return independent, float(covariance)


@settings(max_examples=200, deadline=None)
@given(
    arrays(np.int8, st.tuples(st.integers(2, 7), st.integers(1, 12)), elements=st.integers(0, 1))
)
def test_instability_parts_add_up_and_match_the_pairwise_definition(correct):
    figures = decompose(correct)
    assert figures["independent"] + figures["covariance"] == pytest.approx(
        figures["variance"], abs=1e-12
    )
    independent, covariance = brute_force(correct.astype(float))
    assert figures["independent"] == pytest.approx(independent, abs=1e-12)
    assert figures["covariance"] == pytest.approx(covariance, abs=1e-12)
    assert figures["variance"] == pytest.approx(float(np.var(correct.mean(axis=1), ddof=1)))
    assert figures["normalised_std"] == pytest.approx(
        math.sqrt(figures["variance"]) * math.sqrt(correct.shape[1])
    )


def test_token_z_is_the_one_sided_binomial_z_by_hand():
    texts = ["bad film plot"] * 4 + ["bad film"] * 8 + ["good film plot"] + ["good film"] * 11
    labels = ["negative"] * 12 + ["positive"] * 12
    # Tokens: bad (12 texts, all negative), good (12, all positive), film (24, half each way),
    # plot (5: 4 negative). p0 = 1/2, m = 4: the threshold is the normal quantile of
    # 1 - 0.05/4 = 0.9875, 2.2414. z(bad) = z(good) = 0.5 / sqrt(0.25/12) = 3.4641;
    # z(plot, negative) = 0.3 / sqrt(0.25/5) = 1.3416, below the threshold; film has z = 0.
    rows = token_artifacts(texts, labels, n_labels=2)
    assert [(r["token"], r["label"], r["count"], r["p_label"]) for r in rows] == [
        ("bad", "negative", 12, 1.0), ("good", "positive", 12, 1.0),
    ]  # fmt: skip
    assert [r["z"] for r in rows] == pytest.approx([3.4641016, 3.4641016])
    assert token_artifacts(["don't"], ["negative"], 2) == token_artifacts(
        ["don t"], ["negative"], 2
    )


def test_edit_only_classifier_and_authors_repeating_one_edit():
    edits = [Edit(f"a good film {i}", f"a bad film {i}", "negative", "expert-1") for i in range(10)]
    edits += [
        Edit(f"a bad plot {i}", f"a great plot {i}", "positive", "expert-2") for i in range(10)
    ]
    edits += [Edit("the plot", "the awful plot", "negative", "expert-2")]
    result = artifacts(edits, n_labels=2)
    assert result["edit_only"]["accuracy"] >= 0.9 and result["edit_only"]["majority"] == 11 / 21
    authors = {row["author"]: row for row in result["authors"]}
    assert authors["expert-1"]["share"] == 1.0
    assert authors["expert-1"]["pattern"] == {"removed": ["good"], "inserted": ["bad"]}
    assert authors["expert-2"]["share"] == pytest.approx(10 / 11)


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        ({"original_accuracy": 0.80, "contrast_accuracy": 0.55}, "3"),  # 10 points drop
        ({"original_accuracy": 0.89, "contrast_accuracy": 0.83}, "1"),  # closed 0.825
        ({"original_accuracy": 0.90, "contrast_accuracy": 0.51}, "2"),  # closed 0.1
        ({"original_accuracy": 0.90, "contrast_accuracy": 0.65}, "between"),
    ],
)
def test_inoculation_outcome_follows_section_4(after, expected):
    before = {"original_accuracy": 0.90, "contrast_accuracy": 0.50}
    assert inoculation.outcome(before, after, delta=2.0)["outcome"] == expected


def test_inoculation_pools_are_nested_and_seeded():
    pools = inoculation.nested_pool([f"s{i}" for i in range(30)], [0, 5, 20], seed=3)
    assert pools[0] == [] and pools[20][:5] == pools[5]
    assert pools == inoculation.nested_pool([f"s{i}" for i in reversed(range(30))], [0, 5, 20], 3)


@pytest.mark.django_db
def test_instability_through_the_api_equals_an_independent_decomposition(
    project, released, people, client_for
):
    examples = read_examples(released, "test")
    spec = ModelSpec.objects.create(project=project, name="m", kind="python", source="a.b:c")
    rng = np.random.default_rng(0)
    correct = rng.random((6, len(examples))) < 0.7
    ids = []
    for k in range(6):
        run = EvaluationRun.objects.create(release=released, model=spec, status="succeeded")
        Prediction.objects.bulk_create(
            Prediction(run=run, example=e["id"], set_id=e["set_id"], role=e["role"],
                       gold=e["label"], label=e["label"] if correct[k, i] else "other")
            for i, e in enumerate(examples)
        )  # fmt: skip
        ids.append(run.pk)
    admin = client_for(people["admin"])
    outsider = client_for(people["outsider"])
    assert (
        outsider.post(
            "/api/analyses/", {"kind": "instability", "runs": ids}, format="json"
        ).status_code
        == 404
    )
    created = admin.post("/api/analyses/", {"kind": "instability", "runs": ids}, format="json")
    assert created.status_code == 202, created.json()
    run_analysis(created.json()["id"])  # as the worker would
    result = admin.get(f"/api/analyses/{created.json()['id']}/").json()["result"]
    originals = [i for i, e in enumerate(examples) if e["role"] == "original"]
    expected = decompose(correct[:, originals].astype(int))
    assert result["original"]["variance"] == pytest.approx(expected["variance"])
    independent, covariance = brute_force(correct[:, originals].astype(float))
    assert result["original"]["independent"] == pytest.approx(independent)
    assert result["original"]["covariance"] == pytest.approx(covariance)
    sets = sorted({e["set_id"] for e in examples})
    consistent = np.array([[all(correct[k, i] for i, e in enumerate(examples) if e["set_id"] == s)
                            for s in sets] for k in range(6)])  # fmt: skip
    assert result["consistency"]["variance"] == pytest.approx(
        float(np.var(consistent.mean(axis=1), ddof=1))
    )
    other_release = release_create(project=project, user=people["admin"], version="2")
    stray = EvaluationRun.objects.create(release=other_release, model=spec, status="succeeded")
    mixed = admin.post("/api/analyses/", {"kind": "instability", "runs": [ids[0], stray.pk]},
                       format="json")  # fmt: skip
    assert mixed.status_code == 400 and "same release and split" in mixed.json()["detail"]
    keyword = ModelSpec.objects.create(project=project, name="k", kind="hf-sequence-classification",
                                       source="org/m")  # fmt: skip
    other = EvaluationRun.objects.create(release=released, model=keyword, status="succeeded")
    models = admin.post("/api/analyses/", {"kind": "instability", "runs": [ids[0], other.pk]},
                        format="json")  # fmt: skip
    assert models.status_code == 400
    assert "of hf-sequence-classification and python models" in models.json()["detail"]


@pytest.fixture
def split_release(project, people, settings, tmp_path):  # type: ignore[no-untyped-def]
    """Twenty sets, half dev and half test (seeded random split)."""
    settings.MEDIA_ROOT = tmp_path / "media"
    words = ["the film was good", "the plot was good", "the acting was good", "a good film"]
    for n in range(20):
        pivot = ExampleFactory(project=project, external_id=f"i{n}", label="positive",
                               fields={"text": f"{words[n % 4]} {'.' * (n // 4 + 1)}"})  # fmt: skip
        p = submitted_perturbation(project, people["expert"], pivot=pivot)
        Perturbation.objects.filter(pk=p.pk).update(status="accepted")
    return release_create(project=project, user=people["admin"], version="split",
                          split_strategy="random", proportions={"dev": 0.5, "test": 0.5},
                          min_agreement={"dev": 0, "test": 0})  # fmt: skip


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_inoculation_on_a_real_worker_gives_one_point_per_size_and_rate(
    project, split_release, tiny_model, people, client_for, settings, tmp_path
):
    import redis

    redis.Redis.from_url(BROKER).flushdb()
    spec = ModelSpec.objects.create(
        project=project, name="tiny", kind="hf-sequence-classification", source=str(tiny_model),
        batch_size=8,
    )  # fmt: skip
    db = connection.settings_dict
    env = worker_env(
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        CELERY_BROKER_URL=BROKER, MEDIA_ROOT=str(settings.MEDIA_ROOT),
        CONTRASTLAB_VAR_DIR=str(tmp_path / "var"), HF_HUB_OFFLINE="1",
    )  # fmt: skip
    worker = start_worker(env, tmp_path / "worker.log")
    try:
        created = client_for(people["admin"]).post("/api/analyses/", {
            "kind": "inoculation", "release": split_release.pk, "model": spec.pk,
            "pool_split": "dev", "sizes": [0, 4, 8], "learning_rates": [1e-3, 1e-2],
            "max_epochs": 3, "seed": 0, "delta": 2.0,
        }, format="json")  # fmt: skip
        assert created.status_code == 202, created.json()
        analysis = Analysis.objects.get(pk=created.json()["id"])

        def finished() -> bool:
            analysis.refresh_from_db()
            return analysis.finished

        wait_for(finished, 180, "the inoculation to finish")
    finally:
        log = stop(worker)
    assert analysis.status == "succeeded", (analysis.error, log[-2000:])
    r = analysis.result
    assert [(p["size"], p["learning_rate"]) for p in r["points"]] == [
        (s, lr) for s in (0, 4, 8) for lr in (1e-3, 1e-2)
    ]
    for point in r["points"][:2]:  # size 0: the base model unchanged
        assert point["epochs"] == 0
        assert point["original_accuracy"] == r["before"]["original_accuracy"]
        assert point["contrast_accuracy"] == r["before"]["contrast_accuracy"]
    best = inoculation.best_point(r["points"])
    assert (best["size"], best["learning_rate"]) == (r["best"]["size"], r["best"]["learning_rate"])
    expected = inoculation.outcome(r["before"], best, 2.0)
    assert (r["outcome"], r["gap"], r["drop"]) == (
        expected["outcome"],
        expected["gap"],
        expected["drop"],
    )
    assert analysis.done == analysis.total == 7


@pytest.mark.django_db(transaction=True)
def test_cancelling_mid_inoculation_stops_it_and_leaves_no_files(
    project, split_release, tiny_model, people, monkeypatch, tmp_path, settings
):
    spec = ModelSpec.objects.create(
        project=project, name="tiny", kind="hf-sequence-classification", source=str(tiny_model),
        batch_size=8,
    )  # fmt: skip
    params = {"release": split_release.pk, "model": spec.pk, "sizes": [0, 8, 10],
              "learning_rates": [1e-3], "max_epochs": 100}  # fmt: skip
    analysis = analysis_create(
        project=project, user=people["admin"], kind="inoculation", params=params, send=False
    )
    # What this process writes to a temporary folder goes to this test's own (other work on
    # the machine writes to the system's: a pip install beside CI once failed this test).
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    media = Path(settings.MEDIA_ROOT)
    before = set(media.rglob("*")) if media.exists() else set()

    # The worker waits, once the base model is evaluated, until the cancel is sent: a fast
    # machine had finished the fine-tuning before the test could cancel it (CI saw it once).
    sent = threading.Event()
    heartbeat = jobs.heartbeat

    def held(job, **values):  # type: ignore[no-untyped-def]
        heartbeat(job, **values)
        if values.get("done", 0) >= 1:
            sent.wait(60)

    monkeypatch.setattr(jobs, "heartbeat", held)

    def work() -> None:
        try:
            run_analysis(analysis.pk)
        finally:
            connection.close()

    worker = threading.Thread(target=work)
    worker.start()

    def started() -> bool:
        analysis.refresh_from_db()
        return analysis.done >= 1  # the base model is evaluated; fine-tuning is under way

    wait_for(started, 60, "the inoculation to start")
    analysis_cancel(analysis=analysis)
    sent.set()
    worker.join(timeout=60)
    assert not worker.is_alive()
    analysis.refresh_from_db()
    assert analysis.status == "cancelled" and analysis.result == {}
    assert list(temp.iterdir()) == []
    assert (set(media.rglob("*")) if media.exists() else set()) - before == set()


@pytest.mark.django_db
def test_artifacts_through_the_api_list_tokens_recomputable_by_hand(
    project, split_release, people, client_for
):
    admin = client_for(people["admin"])
    created = admin.post(
        "/api/analyses/", {"kind": "artifacts", "release": split_release.pk}, format="json"
    )
    assert created.status_code == 202, created.json()
    analysis = run_analysis(created.json()["id"])
    assert analysis.status == "succeeded", analysis.error
    result = analysis.result
    texts = [
        e["fields"]["text"]
        for e in read_examples(split_release, "test")
        if e["role"] == "perturbed"
    ]
    assert result["texts"] == len(texts) == 10
    # All perturbed texts are negative: a token in n texts has p_hat = 1 and
    # z = 0.5 / sqrt(0.25 / n) = sqrt(n), listed when above the Bonferroni threshold.
    counts = {t: sum(t in set(text.lower().split()) for text in texts)
              for text in texts for t in text.lower().split() if t.isalpha()}  # fmt: skip
    threshold = NormalDist().inv_cdf(1 - 0.05 / len(counts))
    expected = sorted((t for t, n in counts.items() if math.sqrt(n) > threshold))
    assert sorted(row["token"] for row in result["tokens"]) == expected and expected
    for row in result["tokens"]:
        assert row["label"] == "negative" and row["z"] == pytest.approx(math.sqrt(row["count"]))


@pytest.mark.django_db
def test_bad_analysis_requests_are_refused_clearly(project, released, people, client_for):
    admin = client_for(people["admin"])
    for payload, message in (
        ({"kind": "inoculation", "release": released.pk, "model": "abc"}, "model must be"),
        ({"kind": "artifacts", "release": released.pk, "split": "dev"}, "has no dev split"),
        ({"kind": "instability", "runs": [1, "x"]}, None),
        ({"kind": "nope", "release": released.pk}, None),
    ):
        response = admin.post("/api/analyses/", payload, format="json")
        assert 400 <= response.status_code < 500, (payload, response.status_code)
        if message:
            assert message in response.json()["detail"], response.json()
    assert not Analysis.objects.exists()


@pytest.mark.django_db
def test_a_negative_covariance_part_reads_as_words_not_a_share_below_zero(project, people):
    """Var = independent + covariance; when the covariance part is negative its "share" (here
    -200%) means nothing to a reader: the page says negative and why."""
    from django.test import Client

    part = {"n": 10, "k": 3, "mean": 0.8, "std": 0.01, "normalised_std": 0.03, "variance": 1e-4,
            "independent": 3e-4, "covariance": -2e-4, "covariance_share": -2.0,
            "accuracies": [0.79, 0.8, 0.81]}  # fmt: skip
    analysis = Analysis.objects.create(project=project, kind="instability", status="succeeded",
                                       params={"runs": [1, 2, 3]},
                                       result={"original": part, "runs": [1, 2, 3]})  # fmt: skip
    page = Client()
    page.force_login(people["admin"])
    html = page.get(f"/p/{project.slug}/analyses/{analysis.pk}/").content.decode()
    assert ">negative</span>" in html and "-200.0%" not in html
    assert "Parameters: runs: 1, 2, 3" in html
