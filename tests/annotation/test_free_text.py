"""Free-text (QA) contrast sets end to end through the API (docs/task-types.md): a Quoref-style
project is created, its originals imported with answers, perturbed, validated blind, released
and scored, and every figure is checked against an independent SQuAD computation."""

import collections
import json
import zipfile
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation.models import Perturbation, Project, ValidationItem
from annotation.validation.stats import project_stats
from evaluation.models import ModelSpec
from evaluation.runs.execute import run_evaluation
from evaluation.runs.services import evaluation_enqueue
from tests.factories import ExampleFactory, member, project_creator
from tests.oracles.consistency import consistency
from tests.oracles.squad import best_exact_match, best_f1, f1_score

pytestmark = pytest.mark.django_db

CONTEXT = (
    "Marie Curie won the Nobel Prize in 1903 and again in 1911. Pierre Curie shared the "
    "first prize with her."
)
ORIGINALS = [
    {"id": "q1", "context": CONTEXT, "question": "When did Marie Curie first win the Nobel "
     "Prize?", "answers": ["1903"]},
    {"id": "q2", "context": CONTEXT, "question": "Who shared the first prize?",
     "answers": ["Pierre Curie", "Pierre"]},
    {"id": "q3", "context": CONTEXT, "question": "Who shared the first prize with Pierre?",
     "answers": ["Marie Curie", "Marie"]},
    {"id": "q4", "context": CONTEXT, "question": "When did Pierre Curie win?",
     "answers": ["1903"]},
]  # fmt: skip
PROJECT = {
    "name": "Curie QA",
    "slug": "curie",
    "task_type": "free_text",
    "fields": [
        {"name": "context", "kind": "text", "editable": False},
        {"name": "question", "kind": "text", "editable": True},
    ],
    "labels": [],
    "extra_labels": ["unanswerable"],
    "tags": [{"name": "order"}, {"name": "entity"}],
    "settings": {"control_rate": 0, "max_edit_ratio": 1.0},
}


@pytest.fixture
def qa(client_for, settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"
    creator = project_creator("ada")
    response = client_for(creator).post("/api/projects/", PROJECT, format="json")
    assert response.status_code == 201, response.json()
    project = Project.objects.get(slug="curie")
    people = {
        "admin": creator,
        "expert": member(project, "erin", "expert"),
        "crowd": [member(project, f"v{n}", "validator") for n in range(5)],
    }
    body = "\n".join(json.dumps(row) for row in ORIGINALS).encode()
    upload = {"file": SimpleUploadedFile("curie.jsonl", body)}
    imported = client_for(creator).post(
        "/api/projects/curie/examples/import/", upload, format="multipart"
    )
    assert imported.status_code == 201, imported.json()
    return project, people


def perturb(client, pivot: str, question: str, answers: list[str], tag: str):  # type: ignore[no-untyped-def]
    assert client.post(f"/api/projects/curie/examples/{pivot}/claim/").status_code in (200, 201)
    return client.post(
        "/api/projects/curie/perturbations/",
        {"pivot": pivot, "fields": {"question": question}, "answers": answers, "tags": [tag],
         "submit": True},
        format="json",
    )  # fmt: skip


def answer_all(client_for, crowd, responses: list[dict]) -> int:  # type: ignore[no-untyped-def]
    """Each validator takes their next item and sends their response; returns the item."""
    items = set()
    for validator, response in zip(crowd, responses, strict=True):
        api = client_for(validator)
        shown = api.get("/api/projects/curie/validation/next/").json()
        assert set(shown) == {"item", "fields", "fields_html", "labels", "extra_labels", "flags"}
        assert shown["labels"] == [] and shown["extra_labels"] == ["unanswerable"]
        items.add(shown["item"])
        sent = api.post(f"/api/projects/curie/validation/{shown['item']}/vote/", response)
        assert sent.status_code == 201, sent.json()
    assert len(items) == 1
    return items.pop()


def test_a_quoref_style_set_is_imported_validated_released_and_scored(qa, client_for, staff):
    project, people = qa
    expert, admin = client_for(people["expert"]), client_for(people["admin"])
    assert project.examples.get(external_id="q2").answers == ["Pierre Curie", "Pierre"]

    # The answers must change once normalised; the refused draft is kept.
    same = perturb(expert, "q1", "When did Marie Curie first win a Nobel Prize?", ["the 1903."],
                   "order")  # fmt: skip
    assert same.status_code == 400 and same.json()["field"] == "answers"
    assert "differ from the original's" in same.json()["detail"]
    draft = same.json()["draft"]
    fixed = expert.patch(
        f"/api/projects/curie/perturbations/{draft}/",
        {"fields": {"question": "When did Marie Curie win the Nobel Prize again?"},
         "answers": ["1911"], "submit": True},
        format="json",
    )  # fmt: skip
    assert fixed.status_code == 200, fixed.json()

    # Blind validation: the next item carries the fields only, never the author's answer.
    crowd = people["crowd"]
    shown = client_for(crowd[0]).get("/api/projects/curie/validation/next/").json()
    assert set(shown["fields"]) == {"context", "question"} and "answers" not in json.dumps(shown)
    item = answer_all(
        client_for,
        crowd,
        [{"answer": "1911"}, {"answer": "The 1911"}, {"answer": "1911."}, {"answer": "1903"},
         {"label": "unanswerable"}],
    )  # fmt: skip
    accepted = Perturbation.objects.get(pk=draft)
    assert accepted.status == "accepted"
    assert ValidationItem.objects.get(pk=item).majority_answers == ["1911"]

    # A majority on another answer disputes the perturbation; no majority is no_majority.
    second = perturb(expert, "q2", "Who won the Nobel Prize in 1911?", ["Marie Curie"], "entity")
    assert second.status_code == 201, second.json()
    answer_all(client_for, crowd, [{"answer": "Marie Curie."}, {"answer": "Marie Curie"},
               {"answer": "marie curie"}, {"answer": "Curie"}, {"answer": "Pierre"}])  # fmt: skip
    assert Perturbation.objects.get(pk=second.json()["id"]).status == "accepted"
    third = perturb(expert, "q3", "Who won the prize in 1903 without Pierre?",
                    ["Marie Curie"], "entity")  # fmt: skip
    answer_all(client_for, crowd, [{"answer": "Pierre"}, {"answer": "Pierre!"},
               {"answer": "pierre"}, {"answer": "Marie"}, {"label": "unanswerable"}])  # fmt: skip
    disputed = Perturbation.objects.get(pk=third.json()["id"])
    assert (disputed.status, disputed.majority_answers) == ("disputed", ["Pierre"])
    fourth = perturb(expert, "q4", "When did Pierre Curie win again?", ["never"], "entity")
    answer_all(client_for, crowd, [{"answer": "1911"}, {"answer": "1903"},
               {"label": "unanswerable"}, {"answer": "Pierre"}, {"answer": "never"}])  # fmt: skip
    assert Perturbation.objects.get(pk=fourth.json()["id"]).status == "no_majority"

    # Statistics: the share of items with a majority, and mean pairwise F1.
    stats = admin.get("/api/projects/curie/stats/").json()
    assert stats.pop("shape") == "answers"  # the schema's oneOf branch (issue 48, item 8)
    assert stats == json.loads(json.dumps(project_stats(Project.objects.get(slug="curie"))))
    assert stats["majority_share"] == pytest.approx(3 / 4)
    assert stats["fleiss_kappa"] is None
    responses = [
        ["1911", "The 1911", "1911.", "1903", None],
        ["Marie Curie.", "Marie Curie", "marie curie", "Curie", "Pierre"],
        ["Pierre", "Pierre!", "pierre", "Marie", None],
        ["1911", "1903", None, "Pierre", "never"],
    ]
    pair_scores = [
        (f1_score(a, b) if a and b else float(a == b))
        for item_responses in responses
        for n, a in enumerate(item_responses)
        for b in item_responses[n + 1 :]
    ]
    assert stats["mean_pairwise_f1"] == pytest.approx(sum(pair_scores) / len(pair_scores), abs=1e-4)

    # Adjudication accepts the disputed edit under the validators' answer.
    adjudicated = admin.post(
        f"/api/projects/curie/adjudicate/{disputed.pk}/", {"decision": "accept"}
    )
    assert adjudicated.status_code == 200, adjudicated.json()

    # The release writes answers in place of labels, and paired QA files.
    release = admin.post("/api/projects/curie/releases/", {"version": "1.0"})
    assert release.status_code == 201, release.json()
    bundle = Path(settings.MEDIA_ROOT) / project.releases.get().bundle
    with zipfile.ZipFile(bundle) as archive:
        sets = [json.loads(line) for line in archive.read("sets.jsonl").splitlines()]
        originals = archive.read("paired/test_original.jsonl").decode().splitlines()
        contrasts = archive.read("paired/test_contrast.jsonl").decode().splitlines()
        examples = [json.loads(line) for line in archive.read("examples.jsonl").splitlines()]
        card = archive.read("README.md").decode()
    assert "changes the answers" in card and "mean pairwise F1" in card and "Fleiss" not in card
    assert "paired/{split}_original.jsonl" in card
    by_set = {s["set_id"]: s for s in sets}
    assert by_set["q1"]["original"]["answers"] == ["1903"]
    released = {p["fields"]["question"]: p for s in sets for p in s["perturbations"]}
    assert released["Who won the prize in 1903 without Pierre?"]["answers"] == ["Pierre"]
    assert released["Who won the Nobel Prize in 1911?"]["answers"] == ["Marie Curie"]
    assert all("label" not in p for p in released.values())
    assert len(originals) == len(contrasts) == 3
    assert all("answers" in e and "label" not in e for e in examples)

    # Scoring: the metrics equal an independent SQuAD computation on the same predictions.
    spec = ModelSpec.objects.create(
        project=project, name="rules", kind="python",
        source="tests.evaluation.rule_models:years_and_names",
    )  # fmt: skip
    run = evaluation_enqueue(
        release=project.releases.get(), model=spec, split="test", user=staff, send=False
    )
    run = run_evaluation(run.pk)
    assert run is not None and run.status == "succeeded", run and run.error
    metrics = run.metrics
    predictions = {p.example: p for p in run.predictions.all()}
    by_role: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
    members = []
    for e in examples:
        predicted = predictions[e["id"]].output
        em = best_exact_match(predicted, e["answers"])
        f1 = best_f1(predicted, e["answers"])
        by_role[e["role"]].append((em, f1))
        members.append((e["set_id"], f1 > 0.8))  # docs/metrics.md: every member's F1 over 0.8
    for role, key in (("original", "original"), ("perturbed", "perturbed")):
        ems, f1s = zip(*by_role[role], strict=True)
        assert metrics[f"{key}_em"] == pytest.approx(sum(ems) / len(ems))
        assert metrics[f"{key}_f1"] == pytest.approx(sum(f1s) / len(f1s))
    assert metrics["consistency"] == pytest.approx(consistency(members))
    assert 0 < metrics["perturbed_f1"] < metrics["original_f1"] < 1
    assert set(metrics["per_tag"]) == {"order", "entity"}
    low, high = metrics["intervals"]["perturbed_f1"]
    assert low <= metrics["perturbed_f1"] <= high


def test_free_text_input_is_checked_with_clear_errors(qa, client_for):
    project, people = qa
    admin = client_for(people["admin"])
    bad_rows = b'{"id": "a", "context": "c", "question": "q", "answers": []}\n' \
               b'{"id": "b", "context": "c", "question": "q", "label": "x"}\n' \
               b'{"id": "c", "context": "c", "question": "q", "answers": ["!!"]}\n'  # fmt: skip
    upload = {"file": SimpleUploadedFile("bad.jsonl", bad_rows)}
    refused = admin.post("/api/projects/curie/examples/import/", upload, format="multipart")
    assert refused.status_code == 400
    errors = {e["line"]: e["message"] for e in refused.json()["errors"]}
    assert "at least one non-empty answer" in errors[1]
    assert "missing answers" in errors[2]
    assert "'!!' normalises to nothing under SQuAD's rules" in errors[3]
    assert project.examples.count() == 4  # nothing of the bad file was kept

    labelled = admin.post("/api/projects/", {**PROJECT, "slug": "x", "labels": ["a", "b"]},
                          format="json")  # fmt: skip
    assert labelled.status_code in (400, 403)
    validator = client_for(people["crowd"][0])
    expert = client_for(people["expert"])
    made = perturb(expert, "q1", "When did Marie Curie win again?", ["1911"], "order")
    assert made.status_code == 201
    item = validator.get("/api/projects/curie/validation/next/").json()["item"]
    url = f"/api/projects/curie/validation/{item}/vote/"
    for payload, field in (({"label": "positive"}, "label"), ({}, "answer"),
                           ({"answer": "the", }, "answer"),
                           ({"answer": "1911", "label": "unanswerable"}, "answer")):  # fmt: skip
        response = validator.post(url, payload)
        assert response.status_code == 400 and response.json()["field"] == field, payload
    assert validator.post(url, {"answer": "1911"}).status_code == 201
    assert validator.post(url, {"answer": "1911"}).status_code == 200  # a repeat is no error
    assert validator.post(url, {"answer": "1903"}).status_code == 409


def test_the_results_page_shows_em_f1_and_the_failed_sets(qa, client_for, staff):
    from django.test import Client

    from annotation.models import Perturbation
    from annotation.releases.services import release_create

    project, people = qa
    expert = client_for(people["expert"])
    made = perturb(expert, "q1", "When did Marie Curie win the prize again?", ["1911"], "order")
    Perturbation.objects.filter(pk=made.json()["id"]).update(status="accepted")
    release = release_create(project=project, user=people["admin"], version="1")
    spec = ModelSpec.objects.create(
        project=project, name="rules", kind="python",
        source="tests.evaluation.rule_models:years_and_names",
    )  # fmt: skip
    run = run_evaluation(
        evaluation_enqueue(release=release, model=spec, split="test", user=staff, send=False).pk
    )
    assert run is not None and run.status == "succeeded"
    browser = Client()
    browser.force_login(people["admin"])
    html = browser.get(f"/p/curie/evaluations/{run.pk}/").content.decode()
    assert "F1 on perturbations" in html and 'id="chart-headline"' in html
    # The rule answers 1903 to the perturbed question: the set failed, with gold and prediction.
    assert "<code>q1</code>" in html and "<b>1903</b>" in html
    assert '<td data-label="Gold">1911</td>' in html
    expert_page = Client()
    expert_page.force_login(people["expert"])
    assert expert_page.get(f"/p/curie/evaluations/{run.pk}/").status_code == 404


def test_published_qa_sets_import_with_answers_and_warn_on_unchanged_ones(qa, client_for):
    project, people = qa
    admin = client_for(people["admin"])
    fresh = {
        "set_id": "ropes-1",
        "original": {"id": "r1", "fields": {"context": CONTEXT, "question": "Who won twice?"},
                     "answers": ["Marie Curie"]},
        "perturbations": [
            {"fields": {"context": CONTEXT, "question": "Who shared the first prize?"},
             "answers": ["Pierre Curie"], "tags": ["entity"]},
            {"fields": {"context": CONTEXT, "question": "Who won the prize twice?"},
             "answers": ["marie curie."], "tags": ["entity"]},
        ],
    }  # fmt: skip
    bad = {**fresh, "set_id": "ropes-2", "original": {**fresh["original"], "id": "r2",
           "answers": []}}  # fmt: skip
    lines = [json.dumps(fresh), json.dumps(bad)]

    def send(body: str, **fields):  # type: ignore[no-untyped-def]
        upload = SimpleUploadedFile("sets.jsonl", body.encode())
        form = {"format": "sets_jsonl", "file": upload, **fields}
        return admin.post("/api/projects/curie/import/sets/", form, format="multipart")

    refused = send("\n".join(lines))
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["line"] == 2 and "answer" in json.dumps(refused.json())
    assert not project.examples.filter(external_id__startswith="r").exists()

    imported = send(lines[0])
    assert imported.status_code == 201, imported.json()
    assert "answers must differ from the original's" in json.dumps(imported.json())
    made = {p.fields["question"]: p for p in Perturbation.objects.filter(pivot__external_id="r1")}
    assert made["Who shared the first prize?"].answers == ["Pierre Curie"]
    assert made["Who shared the first prize?"].item.gold_answers == ["Pierre Curie"]
    assert project.examples.get(external_id="r1").answers == ["Marie Curie"]
    again = send(lines[0])
    assert again.status_code == 200, again.json()  # nothing new: 200
    assert (again.json()["perturbations"], again.json()["already_present"]) == (0, 2)
    assert send(lines[0], strict="true").status_code == 400


def test_free_text_pages_speak_of_answers_not_labels(qa, client_for):
    """A free-text project has no labels: its pages say answer(s) where a label project says
    label (the pivots' column, the editor's rationale, the row's perturbations, the dashboard)."""
    project, people = qa
    pivot = ORIGINALS[0]["id"]
    made = perturb(client_for(people["expert"]), pivot, "Who came first?", ["Marie"], "order")
    assert made.status_code == 201, made.json()
    expert, admin = Client(), Client()
    expert.force_login(people["expert"])
    admin.force_login(people["admin"])
    example = project.examples.get(external_id=pivot)
    claimed = project.examples.get(external_id=ORIGINALS[1]["id"])
    expert.post(f"/p/curie/pivots/{claimed.pk}/claim/")
    pages = {
        "pivots": expert.get("/p/curie/pivots/"),
        "editor": expert.get(f"/p/curie/pivots/{claimed.pk}/edit/"),
        "row": admin.get(f"/p/curie/data/originals/{example.pk}/"),
        "dashboard": admin.get("/p/curie/"),
    }
    for name, response in pages.items():
        html = response.content.decode()
        assert response.status_code == 200, name
        assert "<th>Label</th>" not in html and "change the label" not in html, name
        assert "Label-balanced" not in html and "Labels: ·" not in html, name
    assert "Why does this edit change the answer?" in pages["editor"].content.decode()
    assert "Answers: free text (or unanswerable)" in pages["dashboard"].content.decode()


def test_the_dashboard_counts_the_originals_that_wait_for_an_answer(qa):
    """A published DROP set comes without its answers (622 originals): the dashboard says how
    many wait for one, per split, and where to find them."""
    project, people = qa
    for n in range(3):
        ExampleFactory(project=project, external_id=f"w{n}", label="", answers=[],
                       fields={"context": CONTEXT, "question": f"Who won {n}?"})  # fmt: skip
    admin = Client()
    admin.force_login(people["admin"])
    html = admin.get("/p/curie/").content.decode()
    total = project.examples.count()
    assert f'<td>test</td><td class="num">{total}</td><td class="num">3</td>' in html
    assert "<b>3</b> originals wait for their answers" in html
    assert "?kind=originals&amp;waiting=1" in html
