import pytest
from django.test import Client

from annotation.releases.bundle import read_examples
from evaluation.models import EvaluationRun, ModelSpec, Prediction
from evaluation.runners.classifier import SequenceClassifier
from evaluation.runs.execute import run_evaluation
from evaluation.runs.services import evaluation_cancel, evaluation_enqueue, evaluation_retry
from tests.evaluation.conftest import rule_predictions
from tests.factories import TEXTS, member

pytestmark = pytest.mark.django_db


def spec(project, **values):  # type: ignore[no-untyped-def]
    defaults = {"name": "m", "kind": "python", "source": "tests.evaluation.rule_models:keyword"}
    return ModelSpec.objects.create(project=project, **{**defaults, **values})


def run_now(released, model, split="test"):  # type: ignore[no-untyped-def]
    run = evaluation_enqueue(release=released, model=model, split=split, user=None, send=False)
    return run_evaluation(run.pk)


def test_sorted_batches_give_the_same_predictions_as_one_by_one(tiny_model):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    texts = [[t] for t in TEXTS * 3]
    ours = SequenceClassifier(str(tiny_model), device="cpu", max_length=32).predict(texts, 4)
    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_model).eval()
    with torch.inference_mode():
        for (text,), label, probs in zip(texts, ours.labels, ours.probabilities, strict=True):
            logits = model(**tokenizer(text, return_tensors="pt")).logits[0]
            expected = torch.softmax(logits, -1)
            assert label == model.config.id2label[int(expected.argmax())]
            assert probs[label] == pytest.approx(float(expected.max()), abs=1e-5)


def test_hf_run_stores_predictions_and_metrics(project, released, tiny_model):
    run = run_now(
        released,
        spec(
            project,
            kind="hf-sequence-classification",
            source=str(tiny_model),
            batch_size=3,
            device="cpu",
        ),
    )
    assert run.status == "succeeded", run.error
    examples = read_examples(released, "test")
    assert run.predictions.count() == len(examples) == 13
    assert run.done == run.total == 13 and run.examples_per_second > 0
    assert set(run.metrics) >= {
        "original_accuracy",
        "perturbed_accuracy",
        "consistency",
        "per_tag",
        "per_label",
        "intervals",
        "confusion",
    }
    first = run.predictions.first()
    assert set(first.probabilities) == {"negative", "positive"}
    assert sum(first.probabilities.values()) == pytest.approx(1.0, abs=1e-5)


def test_python_model_is_scored_and_its_metrics_are_right(project, released):
    run = run_now(
        released, spec(project, source="tests.evaluation.rule_models:keyword_with_probabilities")
    )
    assert run.status == "succeeded", run.error
    expected = rule_predictions(read_examples(released, "test"))
    assert dict(run.predictions.values_list("example", "label")) == expected
    # Originals hold good/great (positive, right); "awful" has no "bad": predicted positive.
    assert run.metrics["original_accuracy"] == 1.0
    assert run.metrics["perturbed_accuracy"] == pytest.approx(6 / 7)
    assert run.metrics["consistency"] == pytest.approx(5 / 6)
    assert run.metrics["per_tag"]["intensity"] == {"accuracy": 0.0, "count": 1}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {"kind": "hf-sequence-classification", "source": "{models}/nonexistent"},
            "Cannot load model",
        ),
        (
            {"kind": "hf-sequence-classification", "source": "/nonexistent/model"},
            "cannot be loaded from its source",
        ),
        ({"kind": "hf-sequence-classification", "device": "cuda"}, "CUDA is not available"),
        (
            {"kind": "hf-sequence-classification", "label_mapping": {"LABEL_9": "positive"}},
            "label_mapping names LABEL_9, which the model does not have",
        ),
        ({"source": "tests.evaluation.rule_models:unknown_labels"}, "map to no project label"),
        (
            {"source": "tests.evaluation.rule_models:broken"},
            "RuntimeError: the rule engine is broken",
        ),
        ({"source": "tests.evaluation.nowhere:model"}, "Cannot import 'tests.evaluation.nowhere'"),
    ],
)
def test_broken_models_fail_with_their_message(
    project, released, tiny_model, settings, values, message
):
    if values.get("kind") == "hf-sequence-classification" and "source" not in values:
        values = {**values, "source": str(tiny_model)}
    values = {**values, "source": values["source"].format(models=settings.MODELS_DIR)}
    run = run_now(released, spec(project, **values))
    assert run.status == "failed"
    assert message in run.error
    assert not run.predictions.exists()


def test_unmapped_model_labels_fail_clearly(project, released, tmp_path):
    from tests.evaluation.conftest import build_tiny_classifier

    directory = build_tiny_classifier(tmp_path / "generic", labels=("LABEL_0", "LABEL_1"))
    run = run_now(released, spec(project, kind="hf-sequence-classification", source=str(directory)))
    assert run.status == "failed"
    assert "labels LABEL_0, LABEL_1 do not map to project labels" in run.error
    mapped = spec(
        project,
        name="mapped",
        kind="hf-sequence-classification",
        source=str(directory),
        label_mapping={"LABEL_0": "negative", "LABEL_1": "positive"},
    )
    assert run_now(released, mapped).status == "succeeded"


def test_rerun_replaces_predictions_and_cancel_stops(project, released):
    run = run_now(released, spec(project))
    ids = set(run.predictions.values_list("id", flat=True))
    evaluation_retry(run=run)
    again = run_evaluation(run.pk)
    assert again.status == "succeeded" and again.attempts == 1  # a retry counts afresh
    assert Prediction.objects.filter(run=run).count() == 13
    assert ids.isdisjoint(run.predictions.values_list("id", flat=True))
    queued = evaluation_enqueue(
        release=released, model=run.model, split="test", user=None, send=False
    )
    evaluation_cancel(run=queued)
    assert run_evaluation(queued.pk) is None
    queued.refresh_from_db()
    assert queued.status == "cancelled" and not queued.predictions.exists()


def test_a_run_whose_worker_died_can_be_run_again_once_its_heartbeat_is_stale(
    project, released, people, client_for, settings
):
    """After a whole worker was killed, its run stayed "running" and retry answered 409."""
    from datetime import timedelta

    from django.utils import timezone

    settings.EVALUATION_STALE_SECONDS = 60
    run = evaluation_enqueue(
        release=released, model=spec(project), split="test", user=None, send=False
    )
    admin = client_for(people["admin"])
    retry = f"/api/evaluations/{run.pk}/retry/"
    live = timezone.now() - timedelta(seconds=10)
    EvaluationRun.objects.filter(pk=run.pk).update(status="running", heartbeat_at=live)
    assert admin.post(retry).status_code == 409  # its worker may still be at it
    dead = timezone.now() - timedelta(seconds=61)
    EvaluationRun.objects.filter(pk=run.pk).update(heartbeat_at=dead)
    assert admin.post(retry).json()["status"] == "queued"
    assert run_evaluation(run.pk).status == "succeeded"
    assert Prediction.objects.filter(run=run).count() == 13


def test_api_registers_models_and_launches_runs(
    project, released, people, staff, client_for, django_capture_on_commit_callbacks
):
    admin, root = client_for(people["admin"]), client_for(staff)
    bad = root.post(
        "/api/models/",
        {
            "project": project.slug,
            "name": "x",
            "kind": "python",
            "source": "a.b:c",
            "label_mapping": {"POS": "great"},
        },
        format="json",
    )
    assert bad.status_code == 400 and "not labels of this project" in bad.json()["detail"]
    created = root.post(
        "/api/models/",
        {
            "project": project.slug,
            "name": "rules",
            "kind": "python",
            "source": "tests.evaluation.rule_models:keyword",
        },
        format="json",
    )
    assert created.status_code == 201
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = admin.post(
            "/api/evaluations/",
            {"release": released.pk, "model": created.json()["id"], "split": "test"},
            format="json",
        )
    assert response.status_code == 202 and response.json()["status"] == "queued"
    assert len(callbacks) == 1  # the task is sent only once the run is committed
    run_evaluation(response.json()["id"])
    body = admin.get(f"/api/evaluations/{response.json()['id']}/").json()
    assert body["status"] == "succeeded" and body["progress"] == {
        "done": 13,
        "total": 13,
        "percent": 100,
    }
    assert body["metrics"]["consistency"] == pytest.approx(5 / 6)
    wrong_split = admin.post(
        "/api/evaluations/",
        {"release": released.pk, "model": created.json()["id"], "split": "dev"},
        format="json",
    )
    assert wrong_split.status_code == 400 and "has no dev split" in wrong_split.json()["detail"]


def test_only_admins_see_models_runs_and_results(project, released, people, client_for):
    run = run_now(released, spec(project))
    crowd = {**people, "both": member(project, "both", "expert", "validator")}
    for role in ("expert", "validator", "outsider", "both"):
        client = client_for(crowd[role])
        assert client.get(f"/api/evaluations/{run.pk}/").status_code == 404, role
        assert client.get("/api/evaluations/").json()["results"] == [], role
        assert client.get("/api/models/").json()["results"] == [], role
        page = Client()
        page.force_login(crowd[role])
        for path in ("evaluations/", f"evaluations/{run.pk}/", "models/", "evaluations/compare/"):
            assert page.get(f"/p/{project.slug}/{path}").status_code == 404, (role, path)
    assert client_for(None).get(f"/api/evaluations/{run.pk}/").status_code == 401
    assert client_for(people["admin"]).get(f"/api/evaluations/{run.pk}/").status_code == 200


def test_evaluate_command_runs_synchronously(project, released, capsys):
    import json

    from django.core.management import call_command

    model = spec(project, name="rules")
    call_command("evaluate", "--release", str(released.pk), "--model", "rules", "--sync")
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "succeeded" and out["consistency"] == pytest.approx(5 / 6)
    assert EvaluationRun.objects.get(pk=out["run"]).model == model


def test_compare_names_the_figures_and_charts_both_runs(project, released, people):
    first = run_now(released, spec(project))
    second = run_now(
        released,
        spec(project, name="m2", source="tests.evaluation.rule_models:keyword_with_probabilities"),
    )
    page = Client()
    page.force_login(people["admin"])
    url = f"/p/{project.slug}/evaluations/compare/"
    picker = page.get(url).content.decode()  # the newest two, different, are picked
    assert f'value="{second.pk}" selected' in picker and f'value="{first.pk}" selected' in picker
    response = page.get(url, {"a": first.pk, "b": second.pk})
    html = response.content.decode()
    assert (
        "Accuracy on originals" in html and "original_accuracy" not in html.split("compare-data")[0]
    )
    chart = response.context["chart"]
    assert [run["name"] for run in chart["runs"]] == [f"#{first.pk} m", f"#{second.pk} m2"]
    figures = dict(
        zip(
            chart["figures"],
            zip(*(run["values"] for run in chart["runs"]), strict=True),
            strict=True,
        )
    )
    assert figures["Consistency"] == (first.metrics["consistency"], second.metrics["consistency"])
    tags = sorted(first.metrics["per_tag"])
    assert figures[f"Tag {tags[0]}"][0] == first.metrics["per_tag"][tags[0]]["accuracy"]


def test_a_run_whose_database_went_away_is_retried_not_failed(
    project, released, monkeypatch, settings
):
    """A PostgreSQL restart mid-run is not the model's fault: the run is not marked failed,
    and its task retries once the run's heartbeat is stale (a new attempt takes it over)."""
    from django.db import OperationalError

    from annotation import jobs
    from evaluation.runs import tasks

    run = evaluation_enqueue(release=released, model=spec(project), split="test", user=None,
                             send=False)  # fmt: skip

    def database_gone(job):  # type: ignore[no-untyped-def]
        raise OperationalError("server closed the connection unexpectedly")

    with pytest.raises(OperationalError):
        jobs.execute(EvaluationRun, run.pk, database_gone)
    run.refresh_from_db()
    assert run.status == "running" and run.error == ""
    from celery.exceptions import Retry

    monkeypatch.setattr(tasks, "run_evaluation", lambda run_id: database_gone(None))
    retried = []
    monkeypatch.setattr(
        tasks.run_evaluation_task, "retry", lambda **kw: retried.append(kw) or Retry()
    )
    with pytest.raises(Retry):
        tasks.run_evaluation_task(run.pk)
    assert retried[0]["countdown"] == settings.EVALUATION_STALE_SECONDS


def test_a_runs_predictions_download_as_json_lines_and_csv(project, released, people, client_for):
    """One row per scored example, keyed by its id in the release's examples.jsonl."""
    import csv
    import io
    import json

    run = run_now(
        released, spec(project, source="tests.evaluation.rule_models:keyword_with_probabilities")
    )
    admin = client_for(people["admin"])
    url = f"/api/evaluations/{run.pk}/predictions/"
    response = admin.get(url)
    assert response.status_code == 200 and response["Content-Type"].startswith(
        "application/x-ndjson"
    )
    rows = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    examples = {e["id"]: e for e in read_examples(released, "test")}
    assert [row["example_id"] for row in rows] == list(examples)
    for row in rows:
        example = examples[row["example_id"]]
        assert (row["set_id"], row["role"], row["gold"]) == (
            example["set_id"],
            example["role"],
            example["label"],
        )
        assert row["correct"] == (row["prediction"] == row["gold"])
        assert row["probabilities"] == {row["prediction"]: 1.0}  # what the model returned
    assert sum(not row["correct"] for row in rows) > 0  # the keyword model is wrong sometimes
    table = admin.get(url + "?format=csv")
    assert table["Content-Type"].startswith("text/csv")
    parsed = list(csv.DictReader(io.StringIO(b"".join(table.streaming_content).decode())))
    assert [r["example_id"] for r in parsed] == list(examples)
    assert [r["correct"] == "True" for r in parsed] == [row["correct"] for row in rows]
    assert json.loads(parsed[0]["probabilities"]) == rows[0]["probabilities"]
    assert admin.get(url + "?format=xml").status_code == 400
    queued = evaluation_enqueue(release=released, model=run.model, split="test", user=None,
                                send=False)  # fmt: skip
    assert admin.get(f"/api/evaluations/{queued.pk}/predictions/").status_code == 409
    assert client_for(people["expert"]).get(url).status_code == 404


def test_failed_sets_download_whole_and_show_a_page_at_a_time(
    project, released, people, client_for, settings
):
    """The download holds every member of every set with a wrong member, and nothing else;
    the run page shows them FAILED_SETS_PER_PAGE at a time."""
    import json
    from collections import defaultdict

    from django.test import Client

    from evaluation.runs import results

    run = run_now(
        released, spec(project, source="tests.evaluation.rule_models:keyword_with_probabilities")
    )
    admin = client_for(people["admin"])
    url = f"/api/evaluations/{run.pk}/predictions/"
    every = [json.loads(line) for line in b"".join(admin.get(url).streaming_content).splitlines()]
    by_set = defaultdict(list)
    for row in every:
        by_set[row["set_id"]].append(row["correct"])
    failed = {s for s, marks in by_set.items() if not all(marks)}
    assert failed and len(failed) < len(by_set)
    answer = admin.get(url + "?sets=failed")
    rows = [json.loads(line) for line in b"".join(answer.streaming_content).splitlines()]
    assert {r["set_id"] for r in rows} == failed
    assert len(rows) == sum(len(by_set[s]) for s in failed)
    assert "failed-sets" in answer["Content-Disposition"]
    assert admin.get(url + "?sets=some").status_code == 400

    # A run wrong on everything: every set fails, shown a page at a time.
    wrong = EvaluationRun.objects.create(
        release=released, model=run.model, status="succeeded", metrics=run.metrics
    )  # the page needs figures
    examples = read_examples(released, "test")
    Prediction.objects.bulk_create(
        Prediction(run=wrong, example=e["id"], set_id=e["set_id"], role=e["role"],
                   gold=e["label"], label="other")
        for e in examples
    )  # fmt: skip
    sets = list(dict.fromkeys(e["set_id"] for e in examples))
    assert len(sets) >= 2
    page = Client()
    page.force_login(people["admin"])
    per_page, results.FAILED_SETS_PER_PAGE = results.FAILED_SETS_PER_PAGE, 1
    try:
        html = page.get(f"/p/{project.slug}/evaluations/{wrong.pk}/?failed=2").content.decode()
    finally:
        results.FAILED_SETS_PER_PAGE = per_page
    assert f"Page 2 of {len(sets)}" in html
    assert html.count('class="grid failed-set stack"') == 1 and f"<code>{sets[1]}</code>" in html
    assert f"{len(sets)} sets failed" in html


def test_starting_a_run_looks_up_its_release_and_model_once(project, released, people, client_for):
    """The release and the model are checked before the payload is, and the run is queued
    with the ones checked: each is read from the database once, not checked again."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    model = spec(project)
    with CaptureQueriesContext(connection) as queries:
        response = client_for(people["admin"]).post(
            "/api/evaluations/", {"release": released.pk, "model": model.pk}, format="json"
        )
    assert response.status_code == 202
    reads = [q["sql"] for q in queries if q["sql"].lstrip().startswith("SELECT")]
    for table in (released._meta.db_table, model._meta.db_table):
        assert sum(f'FROM "{table}"' in sql for sql in reads) == 1, table
