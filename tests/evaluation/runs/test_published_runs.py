"""Published free-text sets scored from a predictions file under their datasets' own rules,
each checked against an independent computation written in the tests: DROP's metric from its
definition (tests/annotation/test_drop.py, itself checked against lm-evaluation-harness's
port of drop_eval.py) for DROP and Quoref, ROPES's script's rules for ROPES, whose originals and
perturbations share ids (told apart by role)."""

import json
from collections import defaultdict

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation.imports.published.services import import_published
from annotation.releases.bundle import read_examples
from annotation.text.answers import AnswerRules
from evaluation.runs.execute import run_evaluation
from tests.annotation.imports import published_files
from tests.annotation.test_drop import by_hand
from tests.factories import UserFactory
from tests.oracles.consistency import consistency
from tests.oracles.squad import best_exact_match

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(db, settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"
    return UserFactory(username="root", is_staff=True, is_superuser=True)


def released(dataset, root, client_for):  # type: ignore[no-untyped-def]
    files, _ = published_files.BUILDERS[dataset]()
    import_published(dataset=dataset, files=files, user=root)
    api = client_for(root)
    made = api.post(f"/api/projects/{dataset}/releases/", {"version": "1"}, format="json")
    assert made.status_code == 201, made.json()
    from annotation.models import Release

    release = Release.objects.get(pk=made.json()["id"])
    return api, release, read_examples(release, "test")


def scored(api, release, lines):  # type: ignore[no-untyped-def]
    content = "\n".join(json.dumps(line) for line in lines).encode()
    body = {"release": release.pk, "split": "test",
            "predictions": SimpleUploadedFile("p.jsonl", content)}  # fmt: skip
    answer = api.post("/api/evaluations/", body, format="multipart")
    assert answer.status_code == 202, answer.json()
    run = run_evaluation(answer.json()["id"])
    assert run is not None and run.status == "succeeded", run and run.error
    return run


def run_page(root, slug, run):  # type: ignore[no-untyped-def]
    """The run's page as its project's admin reads it."""
    browser = Client()
    browser.force_login(root)
    return browser.get(f"/p/{slug}/evaluations/{run.pk}/").content.decode()


def by_role(examples, values):  # type: ignore[no-untyped-def]
    """Mean of `values` (one per example) over originals and over perturbations."""
    out = {}
    for role in ("original", "perturbed"):
        picked = [v for e, v in zip(examples, values, strict=True) if e["role"] == role]
        out[role] = sum(picked) / len(picked)
    return out


@pytest.mark.parametrize(("dataset", "rule"), [("drop", "em"), ("quoref", "f1")])
def test_drop_and_quoref_runs_score_as_drop_eval(dataset, rule, root, client_for):
    """docs/published/drop.md: a DROP set is consistent when every member is an exact match;
    docs/published/quoref.md: a Quoref set when every member's F1 is above 0.8."""
    api, release, examples = released(dataset, root, client_for)
    guesses = ["26", ["soldiers", "warships"], "1565", "2,000", "Traci", ["Gibson", "Traci"]]
    lines = [{"id": e["id"], "role": e["role"], "prediction": guesses[n % len(guesses)]}
             for n, e in enumerate(examples)]  # fmt: skip
    run = scored(api, release, lines)
    pairs = [
        [by_hand(line["prediction"], gold) for gold in e["answers"]]
        for line, e in zip(lines, examples, strict=True)
    ]
    em = [max(p[0] for p in alternatives) for alternatives in pairs]
    f1 = [max(p[1] for p in alternatives) for alternatives in pairs]
    right = [e == 1.0 for e in em] if rule == "em" else [f > 0.8 for f in f1]
    m = run.metrics
    assert m["answer_rules"] == {"normalization": "drop", "consistency": rule}
    assert m["original_em"] == pytest.approx(by_role(examples, em)["original"])
    assert m["perturbed_f1"] == pytest.approx(by_role(examples, f1)["perturbed"])
    members = [(e["set_id"], r) for e, r in zip(examples, right, strict=True)]
    assert m["consistency"] == pytest.approx(consistency(members))
    assert {(p.example, p.role): p.correct for p in run.predictions.all()} == {
        (e["id"], e["role"]): r for e, r in zip(examples, right, strict=True)}  # fmt: skip
    page = run_page(root, dataset, run)
    assert "scored by DROP's metric" in page
    assert ("every member an exact match" if rule == "em" else "every member F1 &gt; 0.8") in page


def test_a_ropes_run_keeps_articles_and_needs_roles_for_shared_ids(root, client_for):
    api, release, examples = released("ropes", root, client_for)
    shared = {"id": "111", "prediction": "B"}  # both roles hold id 111
    content = json.dumps(shared).encode()
    body = {"release": release.pk, "split": "test",
            "predictions": SimpleUploadedFile("p.jsonl", content)}  # fmt: skip
    refused = api.post("/api/evaluations/", body, format="multipart")
    assert refused.status_code == 400 and "give a role" in json.dumps(refused.json())
    guesses = {"original": "the A", "perturbed": "B"}
    lines = [{"id": e["id"], "role": e["role"], "prediction": guesses[e["role"]]}
             for e in examples]  # fmt: skip
    run = scored(api, release, lines)

    # ROPES's script: SQuAD's normalisation with the articles kept.
    em = [best_exact_match(line["prediction"], e["answers"], articles=False)
          for line, e in zip(lines, examples, strict=True)]  # fmt: skip
    m = run.metrics
    assert m["original_em"] == by_role(examples, em)["original"] == 0.0  # "the A" is not "A"
    assert m["perturbed_em"] == pytest.approx(by_role(examples, em)["perturbed"])
    members = [(e["set_id"], x == 1.0) for e, x in zip(examples, em, strict=True)]
    assert m["consistency"] == pytest.approx(consistency(members))
    # The product's rules, beside: SQuAD's would have erased the "the" that ROPES's keep.
    assert AnswerRules("squad").em_f1("the A", ["A"])[0] == 1.0
    assert AnswerRules("ropes", "em").em_f1("the A", ["A"])[0] == 0.0
    page = run_page(root, "ropes", run)
    assert "normalised as in ROPES's script (SQuAD's rules, articles kept)" in page
    assert "every member an exact match" in page


def test_mctaco_runs_report_exact_match_by_question_as_its_evaluator(root, client_for):
    """MC-TACO's strict accuracy (a question right when every candidate of it is), computed
    here from the files' own question runs, beside the per-row figures of a run."""
    import csv
    import io
    import random

    from tests.annotation.imports.test_published_real import GARDNER, _questions, files_of

    names = ["mctaco/original.tsv", "mctaco/changed.tsv"]
    import_published(dataset="mctaco", files=files_of(GARDNER, names), user=root)
    api = client_for(root)
    made = api.post("/api/projects/mctaco/releases/", {"version": "1"}, format="json")
    from annotation.models import Release

    release = Release.objects.get(pk=made.json()["id"])
    examples = read_examples(release, "test")
    rng = random.Random(7)
    # Mostly right, so that some questions are right as a whole.
    labels = [e["label"] if rng.random() < 0.9 else ({"yes", "no"} - {e["label"]}).pop()
              for e in examples]  # fmt: skip
    run = scored(api, release, [{"id": e["id"], "role": e["role"], "prediction": label}
                                for e, label in zip(examples, labels, strict=True)])  # fmt: skip
    original, changed = (
        _questions(list(csv.reader(io.StringIO((GARDNER / n).read_text()), delimiter="\t"))[1:])
        for n in names
    )
    question_of = {"original": original, "perturbed": changed}
    right: dict = defaultdict(lambda: True)
    for e, label in zip(examples, labels, strict=True):
        key = (e["role"], question_of[e["role"]][e["id"]])
        right[key] &= label == e["label"]
    em = run.metrics["exact_match_by_question"]
    for role in ("original", "perturbed"):
        mine = [ok for (r, _), ok in right.items() if r == role]
        assert em[role] == {"exact_match": pytest.approx(sum(mine) / len(mine)),
                            "groups": len(mine)}  # fmt: skip
    assert em["perturbed"]["groups"] == 100
    # Every candidate of original.tsv is scored, so a question's figure is the file's own.
    assert em["original"]["groups"] == 100
    assert sum(e["role"] == "original" for e in examples) == len(original) == 751
    assert "exact match by question on originals" in run_page(root, "mctaco", run)
