"""Two runs compared through the API and the Compare runs page, on the real IMDb contrast sets
(Gardner et al., 2020; ../shared/data, never copied here), scored by two rule models: every
paired figure is each run's own metric, its test is statsmodels' and scipy's on the runs'
predictions, its interval an independent bootstrap's within Monte Carlo error."""

import json
import random

import numpy as np
import pytest
from django.test import Client
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar

from evaluation.models import ModelSpec
from evaluation.runs import compare, results
from evaluation.runs.execute import run_evaluation
from evaluation.runs.services import evaluation_enqueue
from tests.evaluation.analyses.test_analyses_imdb import imdb_release

pytestmark = pytest.mark.django_db
MAPPING = {"negative": "Negative", "positive": "Positive"}
FIGURES = ("original_accuracy", "perturbed_accuracy", "drop", "consistency", "macro_f1")


@pytest.fixture
def imdb(shared_data, project, people, client_for, settings, tmp_path):  # type: ignore[no-untyped-def]
    """The IMDb dev and test contrast sets as published, released, and two lexicon models'
    runs on test."""
    settings.MEDIA_ROOT = tmp_path / "media"
    admin = client_for(people["admin"])
    made = imdb_release(shared_data, project, admin)
    release = project.releases.get(pk=made)
    return release, admin, [scored(release, seed, "test") for seed in (0, 3)]


def scored(release, seed, split, run=True):  # type: ignore[no-untyped-def]
    spec, _ = ModelSpec.objects.get_or_create(
        project=release.project, name=f"lexicon-{seed}", kind="python",
        label_mapping=MAPPING, source=f"tests.evaluation.rule_models:lexicon_{seed}",
    )  # fmt: skip
    made = evaluation_enqueue(release=release, model=spec, split=split, user=None, send=False)
    return run_evaluation(made.pk) if run else made


def by_set(run):  # type: ignore[no-untyped-def]
    """Written from the predictions, as the paper defines it: right on every member."""
    consistent: dict[str, bool] = {}
    for p in run.predictions.all():
        consistent[p.set_id] = consistent.get(p.set_id, True) and p.label == p.gold
    return consistent


def test_two_runs_on_real_imdb_sets_compare_as_statsmodels_and_scipy_say(imdb):
    _, admin, (a, b) = imdb
    answer = admin.get(f"/api/evaluations/compare/?runs={a.pk},{b.pk}")
    assert answer.status_code == 200, answer.json()
    compared = answer.json()
    assert compared["runs"] == [a.pk, b.pk] and compared["sets"] == 488
    for name in FIGURES:
        row = compared[name]
        assert row["values"] == pytest.approx([a.metrics[name], b.metrics[name]], abs=1e-12)
        assert row["difference"] == pytest.approx(b.metrics[name] - a.metrics[name], abs=1e-12)
        assert row["interval"][0] <= row["difference"] <= row["interval"][1]
    tag = compared["per_tag"]["negation"]
    own = [r.metrics["per_tag"]["negation"]["accuracy"] for r in (a, b)]
    assert tag["values"] == pytest.approx(own)

    sets_a, sets_b = by_set(a), by_set(b)
    x = np.array([sets_a[s] for s in sorted(sets_a)])
    y = np.array([sets_b[s] for s in sorted(sets_a)])
    table = [[int(np.sum(x & y)), int(np.sum(x & ~y))], [int(np.sum(~x & y)), int(np.sum(~x & ~y))]]
    consistency = compared["consistency"]
    assert consistency["test"] == "McNemar exact, per set"
    assert consistency["p_value"] == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)
    assert compared["discordance"] == pytest.approx(np.mean(x != y))

    right = [{(p.example, p.role): p.label == p.gold for p in r.predictions.all()} for r in (a, b)]
    originals = [key for key in right[0] if key[1] == "original"]
    only_b = sum(right[1][k] and not right[0][k] for k in originals)
    discordant = sum(right[1][k] != right[0][k] for k in originals)
    expected = binomtest(only_b, discordant, 0.5).pvalue if discordant else 1.0
    assert compared["original_accuracy"]["p_value"] == pytest.approx(expected, rel=1e-12)

    # An independent paired bootstrap of consistency's difference: sets drawn with Python's
    # random, the same for both runs; 2,000 draws of 488 sets move an end by about 0.002.
    draw, names = random.Random(7), sorted(sets_a)
    differences = []
    for _ in range(2000):
        picked = [names[draw.randrange(len(names))] for _ in names]
        differences.append(
            np.mean([sets_b[s] for s in picked]) - np.mean([sets_a[s] for s in picked])
        )
    assert consistency["interval"] == pytest.approx(
        list(np.percentile(differences, [2.5, 97.5])), abs=0.01
    )

    within = compared["within_run"]
    assert [w["drop"] for w in within] == pytest.approx([a.metrics["drop"], b.metrics["drop"]])
    assert compared["power"]["sets"] == 488
    mean = (a.metrics["consistency"] + b.metrics["consistency"]) / 2
    half_width = 1.959964 * np.sqrt(mean * (1 - mean) / 488)
    assert compared["power"]["consistency_half_width"] == pytest.approx(half_width, rel=1e-6)


def test_the_compare_page_shows_each_difference_its_interval_and_its_test(imdb, people):
    release, _, (a, b) = imdb
    browser = Client()
    browser.force_login(people["admin"])
    page = browser.get(f"/p/{release.project.slug}/evaluations/compare/?a={a.pk}&b={b.pk}")
    text = page.content.decode()
    assert page.status_code == 200
    assert "McNemar exact, per set" in text and "paired permutation over sets" in text
    assert "95% interval (paired)" in text
    verdicts = {"within noise", "B higher", "B lower"}
    assert any(v in text for v in verdicts)
    assert 'id="within-run"' in text and "of sets are consistent in one run only" in text
    consistency = compare.run_comparison(a, b)["consistency"]
    assert results.points(consistency["difference"]).replace("\u2212", "-") == (
        f"{consistency['difference'] * 100:+.1f} pp"
    )
    assert results.points(consistency["difference"]) in text and "(points)" in text


@pytest.mark.parametrize(
    ("p", "interval", "said"),
    [(0.0625, [-1.0, -3 / 7], "not significant at 0.05 by McNemar's exact test, though the "
      "bootstrap interval excludes 0"),
     (0.01, [-0.2, 0.1], "significant at 0.05 by McNemar's exact test, though the bootstrap "
      "interval holds 0"),
     (0.5, [-0.2, 0.1], "within noise"), (0.01, [-1.0, -3 / 7], "B lower")],
)  # fmt: skip
def test_a_verdict_says_when_the_interval_and_the_test_disagree(p, interval, said):
    """The brief's case: 7 sets, consistency -71.4% [-100%, -42.9%], McNemar p 0.0625."""
    figure = {"difference": -5 / 7, "interval": interval, "p_value": p,
              "test": "McNemar exact, per set"}  # fmt: skip
    assert results.verdict(figure) == said


def test_differences_read_in_points_and_a_one_point_interval_gives_its_n():
    assert results.points(-5 / 7) == "\u221271.4 pp"
    assert results.interval_points([-1.0, -3 / 7], 7) == "[\u2212100.0, \u221242.9] pp"
    one = results.interval_points([0.5, 0.5], 1)
    assert one == "[+50.0, +50.0] pp (no spread; n = 1 set)"


def test_comparisons_refuse_what_they_cannot_pair(imdb, people, client_for):
    release, admin, (a, b) = imdb
    on_dev = scored(release, 1, "dev")
    queued = scored(release, 2, "test", run=False)
    refusals = {
        f"{a.pk},{on_dev.pk}": "same release and split",
        f"{a.pk},{queued.pk}": "only succeeded runs compare",
        f"{a.pk},{a.pk}": f"runs={a.pk},{a.pk} names run #{a.pk} twice",
        f"{a.pk}": "two run ids",
        "x,y": "two run ids",
        "": "two run ids",
    }
    for runs, reason in refusals.items():
        answer = admin.get(f"/api/evaluations/compare/?runs={runs}")
        assert answer.status_code == 400 and reason in json.dumps(answer.json()), (
            runs,
            answer.json(),
        )
    assert admin.get(f"/api/evaluations/compare/?runs={a.pk},999999").status_code == 404
    for role in ("expert", "validator", "outsider"):
        answer = client_for(people[role]).get(f"/api/evaluations/compare/?runs={a.pk},{b.pk}")
        assert answer.status_code == 404, role
    page = Client()
    page.force_login(people["admin"])
    shown = page.get(f"/p/{release.project.slug}/evaluations/compare/?a={a.pk}&b={on_dev.pk}")
    assert shown.status_code == 200 and "No paired figures" in shown.content.decode()


def test_the_release_answers_the_sets_a_difference_needs(imdb, people):
    """The release's answer and page: consistency's half-width over its 488 test sets (the
    normal interval's, written here) and Connor's figures (checked by simulation in
    tests/annotation/releases/test_power.py) for each assumed discordance."""
    release, admin, _ = imdb
    power = admin.get(f"/api/releases/{release.pk}/").json()["power"]
    assert power["test"]["sets"] == 488 and power["dev"]["sets"] == 100
    assert power["test"]["consistency_half_width"] == pytest.approx(
        1.959964 * np.sqrt(0.25 / 488), rel=1e-6
    )
    for row in power["test"]["by_discordance"]:
        # more sets detect a smaller difference; a 5-point one needs more sets at more discordance
        dev = next(
            r for r in power["dev"]["by_discordance"] if r["discordance"] == row["discordance"]
        )
        assert row["detectable_difference"] < dev["detectable_difference"]
    needed = [row["sets_needed"] for row in power["test"]["by_discordance"]]
    assert needed == sorted(needed) and len(set(needed)) == 3
    browser = Client()
    browser.force_login(people["admin"])
    page = browser.get(f"/p/{release.project.slug}/releases/{release.pk}/").content.decode()
    assert "The sets a difference needs" in page and 'id="release-power"' in page
    half = power["test"]["consistency_half_width"] * 100
    assert f"±{half:.1f} points" in page and "half-width" not in page
    assert f"{needed[0]} sets for a 5-point difference" in page
    assert "none ·" not in page
