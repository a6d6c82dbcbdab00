"""Runs from a predictions file: scored like any run (checked against a computation written
here), by a project admin who is not staff; unknown ids refuse the file with their line;
missing examples count as wrong and are listed."""

import json
from collections import defaultdict

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.errors import DomainError
from annotation.releases.bundle import read_examples
from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runs.execute import run_evaluation
from tests.factories import UserFactory
from tests.oracles.consistency import consistency
from tests.oracles.squad import best_exact_match, best_f1

pytestmark = pytest.mark.django_db


def post(client, release_id, name, content, split="test"):  # type: ignore[no-untyped-def]
    upload = SimpleUploadedFile(name, content.encode())
    body = {"release": release_id, "split": split, "predictions": upload}
    return client.post("/api/evaluations/", body, format="multipart")


def test_a_classification_release_scored_from_a_json_object(released, people, client_for):
    examples = read_examples(released, "test")
    assert not people["admin"].is_staff
    wrong = {e["id"] for e in examples[1::3]}
    missing = examples[-1]["id"]
    flip = {"positive": "negative", "negative": "positive"}
    given = {e["id"]: (flip[e["label"]] if e["id"] in wrong else e["label"].upper())
             for e in examples if e["id"] != missing}  # fmt: skip
    admin = client_for(people["admin"])
    answer = post(admin, released.pk, "baseline.json", json.dumps(given))
    assert answer.status_code == 202, answer.json()
    run = run_evaluation(answer.json()["id"])
    assert run is not None and run.status == "succeeded", run and run.error
    right = {e["id"]: e["id"] not in wrong and e["id"] != missing for e in examples}
    by_role = defaultdict(list)
    for e in examples:
        by_role[e["role"]].append(right[e["id"]])
    m = run.metrics
    assert m["original_accuracy"] == pytest.approx(
        sum(by_role["original"]) / len(by_role["original"])
    )
    assert m["perturbed_accuracy"] == pytest.approx(
        sum(by_role["perturbed"]) / len(by_role["perturbed"])
    )
    assert m["consistency"] == pytest.approx(consistency((e["set_id"], right[e["id"]])
                                                         for e in examples))  # fmt: skip
    assert m["missing"] == {"count": 1, "ids": [missing]}
    assert run.model.kind == "predictions" and run.model.name == "predictions: baseline.json"
    again = post(admin, released.pk, "baseline.json", json.dumps(given))  # the same name again
    assert again.status_code == 202, again.json()
    assert EvaluationRun.objects.get(pk=again.json()["id"]).model.name == (
        "predictions: baseline.json (2)"
    )
    from django.test import Client

    browser = Client()
    browser.force_login(people["admin"])
    page = browser.get(f"/p/{released.project.slug}/evaluations/{run.pk}/")
    assert page.status_code == 200 and f"<code>{missing}</code>" in page.content.decode()


def test_unknown_ids_refuse_the_file_with_their_line_and_nothing_is_queued(
    released, people, client_for
):
    examples = read_examples(released, "test")
    first, second = examples[0], examples[1]
    lines = [
        {"id": first["id"], "prediction": first["label"], "role": first["role"]},
        {"id": "nope", "prediction": "positive"},
        {"id": second["id"], "prediction": "maybe"},
        {"id": second["id"], "prediction": "positive", "role": "sideways"},
        {"id": first["id"], "prediction": "negative"},
    ]
    admin = client_for(people["admin"])
    answer = post(admin, released.pk, "p.jsonl", "\n".join(json.dumps(x) for x in lines))
    assert answer.status_code == 400
    errors = answer.json()["errors"]
    assert [e["line"] for e in errors] == [2, 3, 4, 5]
    assert "unknown id 'nope'" in errors[0]["message"]
    assert "not a label" in errors[1]["message"] and "role must be" in errors[2]["message"]
    assert "a second prediction" in errors[3]["message"]
    assert not EvaluationRun.objects.exists() and not ModelSpec.objects.exists()
    model = ModelSpec.objects.create(project=released.project, name="m", kind="python",
                                     source="tests.evaluation.rule_models:keyword")  # fmt: skip
    both = admin.post("/api/evaluations/", {"release": released.pk, "model": model.pk,
                                            "predictions": SimpleUploadedFile("p.json", b"{}")},
                      format="multipart")  # fmt: skip
    assert both.status_code == 400
    for role in ("expert", "validator", "outsider"):
        refused = post(client_for(people[role]), released.pk, "p.json", "{}")
        assert refused.status_code in (403, 404)
    # Only an upload makes a predictions "model": no project's task is scored by the kind on
    # the API, for anyone, whatever its source.
    for user, source in ((people["admin"], "org/x"), (people["admin"], "/etc/passwd"),
                         (UserFactory(username="root", is_staff=True), "/etc/passwd")):  # fmt: skip
        registered = client_for(user).post("/api/models/", {"project": released.project.slug,
                                           "name": "x", "kind": "predictions", "source": source},
                                           format="json")  # fmt: skip
        assert registered.status_code == 400
        assert registered.json()["field"] == "kind"
        assert registered.json()["detail"].endswith("not predictions.")
    assert not ModelSpec.objects.filter(name="x").exists()


def test_a_run_that_cannot_be_made_leaves_no_predictions_file(
    released, people, client_for, monkeypatch, settings, tmp_path
):
    """The file was written before the run's transaction: a failure left it, with no run."""
    from evaluation.runs import services

    settings.MEDIA_ROOT = tmp_path / "media"

    def refused(**_):  # type: ignore[no-untyped-def]
        raise DomainError("the queue is closed")

    monkeypatch.setattr(services, "evaluation_enqueue", refused)
    given = {e["id"]: e["label"] for e in read_examples(released, "test")}
    answer = post(client_for(people["admin"]), released.pk, "p.json", json.dumps(given))
    assert answer.status_code == 400 and answer.json()["detail"] == "the queue is closed"
    assert not ModelSpec.objects.exists()
    assert not list((tmp_path / "media").rglob("*.json"))


def test_a_free_text_release_scored_from_jsonl_with_squads_rules(questions):
    _, release_id, root = questions
    from annotation.models import Release

    examples = read_examples(Release.objects.get(pk=release_id), "test")
    given = {e["id"]: (["The", e["answers"][0]] if n % 2 else "no idea")
             for n, e in enumerate(examples)}  # fmt: skip
    content = "\n".join(json.dumps({"id": i, "prediction": p}) for i, p in given.items())
    answer = post(root, release_id, "answers.jsonl", content)
    assert answer.status_code == 202, answer.json()
    run = run_evaluation(answer.json()["id"])
    assert run is not None and run.status == "succeeded"
    # docs/metrics.md: under SQuAD's rules a list of spans is scored as its spans joined by " | "
    spans = {i: " | ".join(p) if isinstance(p, list) else p for i, p in given.items()}
    em = [best_exact_match(spans[e["id"]], e["answers"]) for e in examples]
    f1 = [best_f1(spans[e["id"]], e["answers"]) for e in examples]
    originals = [i for i, e in enumerate(examples) if e["role"] == "original"]
    m = run.metrics
    assert m["original_em"] == pytest.approx(sum(em[i] for i in originals) / len(originals))
    assert m["original_f1"] == pytest.approx(sum(f1[i] for i in originals) / len(originals))
    assert m["missing"]["count"] == 0


@pytest.mark.parametrize(("normalization", "rule"), [("squad", "f1"), ("ropes", "em")])
def test_each_answer_variant_matches_its_rules_written_here(questions, normalization, rule):
    """SQuAD's normalisation removes articles, ROPES's keeps them; consistency by F1 over 0.8
    or by exact match: the run's figures equal those rules applied here."""
    project, release_id, root = questions
    from annotation.models import Release
    from annotation.projects.services import project_update

    project_update(project=project, user=None, settings={
        "answer_normalization": normalization, "answer_consistency": rule})  # fmt: skip
    examples = read_examples(Release.objects.get(pk=release_id), "test")
    given = {e["id"]: ("The " + e["answers"][0] if n % 2 else e["answers"][0] + " too")
             for n, e in enumerate(examples)}  # fmt: skip
    content = json.dumps(given)
    run = run_evaluation(post(root, release_id, "variant.json", content).json()["id"])
    assert run is not None and run.status == "succeeded", run and run.error

    articles = normalization == "squad"  # ROPES's script keeps them
    em = {e["id"]: best_exact_match(given[e["id"]], e["answers"], articles) for e in examples}
    f1s = {e["id"]: best_f1(given[e["id"]], e["answers"], articles) for e in examples}
    right = {i: em[i] == 1.0 if rule == "em" else f1s[i] > 0.8 for i in em}
    perturbed = [e["id"] for e in examples if e["role"] == "perturbed"]
    m = run.metrics
    assert m["perturbed_em"] == pytest.approx(sum(em[i] for i in perturbed) / len(perturbed))
    assert m["perturbed_f1"] == pytest.approx(sum(f1s[i] for i in perturbed) / len(perturbed))
    assert m["consistency"] == pytest.approx(consistency((e["set_id"], right[e["id"]])
                                                         for e in examples))  # fmt: skip
    assert m["answer_rules"] == {"normalization": normalization, "consistency": rule}
    assert {p.example: p.correct for p in run.predictions.all()} == right
