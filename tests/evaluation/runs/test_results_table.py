"""The results table (docs/workflows.md) on three of Gardner et al.'s published contrast sets as
published (../shared/data, never copied here): BoolQ and PERSPECTRUM (labels) and Quoref (free
text), each scored by two "models" (predictions files of the same name in every project). Every
figure, interval and n is the run's own (read from the runs, and consistency recomputed from
their predictions by tests/oracles/), one row per dataset as Table 2 has them; the downloads
parse; "score the missing cells" queues exactly the missing runs."""

import csv
import io
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.imports.published.services import import_published
from annotation.models import Project, Release
from annotation.releases.bundle import read_examples
from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runs.execute import run_evaluation
from tests.annotation.imports.test_published_real import GARDNER, TABLE_2, files_of
from tests.factories import ProjectFactory, UserFactory, member
from tests.oracles.consistency import consistency

pytestmark = pytest.mark.django_db

DATASETS = {"boolq": ["boolq_perturbed.json"], "perspectrum": TABLE_2["perspectrum"][0],
            "quoref": TABLE_2["quoref"][0]}  # fmt: skip
MODELS = {"model_a.jsonl": 0.9, "model_b.jsonl": 0.6}  # how often each is right
LABELED = ("original_accuracy", "perturbed_accuracy", "consistency")
ANSWERED = ("original_em", "original_f1", "perturbed_em", "perturbed_f1", "consistency")
N_OF = {"original": "originals", "perturbed": "perturbed", "pair": "pairs", "consistency": "sets"}


def guess(example, project, right):  # type: ignore[no-untyped-def]
    """The gold answer when `right`, else a wrong one."""
    if project.is_free_text:
        return example["answers"][0] if right else "no idea at all"
    gold = example["label"]
    return gold if right else next(label for label in project.labels if label != gold)


@pytest.fixture
def lab(db, settings, tmp_path, client_for):  # type: ignore[no-untyped-def]
    """The three datasets imported, released, and scored by both models."""
    settings.MEDIA_ROOT = tmp_path / "media"
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    api = client_for(root)
    runs: dict[tuple[str, str], EvaluationRun] = {}
    for dataset, names in DATASETS.items():
        import_published(dataset=dataset, files=files_of(GARDNER, names), user=root)
        made = api.post(f"/api/projects/{dataset}/releases/", {"version": "1"}, format="json")
        assert made.status_code == 201, made.json()
        release = Release.objects.get(pk=made.json()["id"])
        examples = read_examples(release, "test")
        for name, rate in MODELS.items():
            draw = random.Random(f"{dataset}-{name}")
            lines = [{"id": e["id"], "role": e["role"],
                      "prediction": guess(e, release.project, draw.random() < rate)}
                     for e in examples]  # fmt: skip
            content = "\n".join(json.dumps(line) for line in lines).encode()
            upload = SimpleUploadedFile(name, content)
            body = {"release": release.pk, "split": "test", "predictions": upload}
            answer = api.post("/api/evaluations/", body, format="multipart")
            assert answer.status_code == 202, answer.json()
            run = run_evaluation(answer.json()["id"])
            assert run is not None and run.status == "succeeded", run and run.error
            runs[dataset, f"predictions: {name}"] = run
    return api, root, runs


def expected_figures(run):  # type: ignore[no-untyped-def]
    """The run's own figures: value, interval and n as its metrics hold them."""
    keys = ANSWERED if run.release.project.is_free_text else LABELED
    metrics = run.metrics
    return {
        key: {"value": metrics[key], "interval": metrics["intervals"][key],
              "n": metrics["counts"][N_OF[key.split("_")[0]]]}
        for key in keys
    }  # fmt: skip


def test_one_row_per_dataset_holding_each_runs_own_figures(lab):
    api, _, runs = lab
    answer = api.get("/api/results/?projects=boolq,perspectrum,quoref&split=test")
    assert answer.status_code == 200, answer.json()
    table = answer.json()
    assert [row["project"] for row in table["rows"]] == ["boolq", "perspectrum", "quoref"]
    assert table["models"] == ["predictions: model_a.jsonl", "predictions: model_b.jsonl"]
    assert table["missing"] == 0
    sets = {"boolq": 68, "perspectrum": 217, "quoref": 415}  # Table 2 (BoolQ: its file's)
    for row in table["rows"]:
        assert row["sets"] == sets[row["project"]]
        for model, cell in row["cells"].items():
            run = runs[row["project"], model]
            assert cell["status"] == "scored" and cell["run"] == run.pk
            assert cell["url"] == f"/p/{row['project']}/evaluations/{run.pk}/"
            assert cell["figures"] == expected_figures(run)
            members = [(p.set_id, p.correct) for p in run.predictions.all()]
            assert cell["figures"]["consistency"]["value"] == pytest.approx(consistency(members))
            low, high = cell["figures"]["consistency"]["interval"]
            assert low <= cell["figures"]["consistency"]["value"] <= high


def test_the_newest_successful_run_fills_a_cell(lab):
    api, _, runs = lab
    first = runs["boolq", "predictions: model_a.jsonl"]
    again = EvaluationRun.objects.create(
        release=first.release, model=first.model, split="test", status="failed"
    )
    other = runs["boolq", "predictions: model_b.jsonl"]
    newer = EvaluationRun.objects.create(
        release=first.release, model=first.model, split="test", status="succeeded",
        metrics=other.metrics, finished_at=first.finished_at + timedelta(seconds=5),
    )  # fmt: skip
    cell = api.get("/api/results/?projects=boolq").json()["rows"][0]["cells"][first.model.name]
    assert cell["run"] == newer.pk != again.pk
    assert cell["figures"] == expected_figures(other)


def test_downloads_parse_and_hold_the_same_figures(lab):
    api, _, runs = lab
    Project.objects.filter(slug="boolq").update(name="BoolQ_1 & 100% {real} #1")
    base = "/api/results/?projects=boolq,perspectrum,quoref"
    answer = api.get(base + "&format=csv")
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/csv")
    name = "results-boolq-perspectrum-quoref-test-by-release.csv"
    assert f'filename="{name}"' in answer["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(answer.content.decode())))
    assert [r["project"] for r in rows] == ["boolq", "perspectrum", "quoref"]
    for row in rows:
        for model in ("predictions: model_a.jsonl", "predictions: model_b.jsonl"):
            run = runs[row["project"], model]
            assert row[f"{model}: run"] == str(run.pk) and row[f"{model}: status"] == "scored"
            for key, figure in expected_figures(run).items():
                assert float(row[f"{model}: {key}"]) == figure["value"]
                assert [float(row[f"{model}: {key} low"]), float(row[f"{model}: {key} high"])] == (
                    figure["interval"]
                )
                assert int(row[f"{model}: {key} n"]) == figure["n"]

    markdown = api.get(base + "&format=md").content.decode()
    lines = [line for line in markdown.splitlines() if line.startswith("|")]
    assert len(lines) == 2 + 3  # the head, its rule, a row per dataset
    widths = {len(re.split(r"(?<!\\)\|", line)) for line in lines}
    assert len(widths) == 1
    perspectrum = runs["perspectrum", "predictions: model_a.jsonl"].metrics
    low, high = perspectrum["intervals"]["consistency"]
    shown = f"| {perspectrum['consistency'] * 100:.1f} ±{(high - low) / 2 * 100:.1f} |"
    assert shown in lines[3] and "| 217 |" in lines[3]  # the sets in their own column
    assert "n=" not in markdown and ".md" not in markdown  # no repository path

    latex = api.get(base + "&format=tex").content.decode()
    check_tabular(latex, rows=3 * (1 + 2 * 2))  # per dataset its heading, per model two lines
    assert r"\textit{BoolQ\_1 \& 100\% \{real\} \#1} (68 sets)" in latex
    assert r"predictions: model\_a.jsonl" in latex
    assert "|" not in latex.split(r"\begin{tabular}")[1]  # booktabs-style: no vertical rule
    assert "{[}" not in latex and "(n=" not in latex
    assert f"$\\pm${(high - low) / 2 * 100:.1f}" in latex
    compile_if_possible(latex)
    bare = api.get(base + "&format=tex&intervals=0").content.decode()
    check_tabular(bare, rows=3 * (1 + 2))
    assert r"$\pm$" not in bare
    assert "no-intervals" in api.get(base + "&format=md&intervals=0")["Content-Disposition"]


def check_tabular(latex: str, rows: int) -> None:
    """One tabular, its column count kept by every line, no special character left bare."""
    body = latex.split(r"\begin{tabular}{", 1)[1]
    spec, body = body.split("}", 1)
    assert body.count(r"\end{tabular}") == 1 and latex.count(r"\begin{tabular}") == 1
    columns = len(spec)
    lines = [line for line in body.splitlines() if r"\\" in line]
    assert len(lines) == 2 + rows  # the head's two lines
    for line in lines:
        bare = re.sub(r"\\[&%_#${}]", "", line.split(r"\\")[0])
        spans = [int(g) for g in re.findall(r"\\multicolumn\{(\d+)\}", line)]
        assert bare.count("&") + 1 + sum(g - 1 for g in spans) == columns, line
        assert not re.search(r"[%_#]", bare.replace(r"$\pm$", "")), line


def compile_if_possible(latex: str) -> None:
    """pdflatex compiles the table in a table environment of a bare article (CI installs it:
    .ci/run), and it fits the text's width (no overfull box)."""
    if shutil.which("pdflatex") is None:
        assert not os.environ.get("CI"), "pdflatex is missing: .ci/run installs it"
        return  # not installed here: the tabular's form is checked above
    document = (
        "\\documentclass{article}\\begin{document}\\begin{table}\\centering\n\\input{body}\n"
        "\\end{table}\\end{document}\n"
    )
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "body.tex").write_text(latex, encoding="utf-8")
        (Path(folder) / "table.tex").write_text(document, encoding="utf-8")
        done = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "table.tex"],
            cwd=folder, capture_output=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout.decode()[-2000:]
        assert (Path(folder) / "table.pdf").stat().st_size > 0
        log = (Path(folder) / "table.log").read_text(encoding="utf-8", errors="replace")
        assert "Overfull \\hbox" not in log, log[log.find("Overfull") :][:300]


def test_an_admin_sees_only_the_projects_they_administer(lab, client_for):
    lab_admin = member(Project.objects.get(slug="boolq"), "lena", "admin")
    member(Project.objects.get(slug="quoref"), "lena", "validator")
    mine = client_for(lab_admin).get("/api/results/").json()
    assert mine["projects"] == ["boolq"] and [r["project"] for r in mine["rows"]] == ["boolq"]
    refused = client_for(lab_admin).get("/api/results/?projects=boolq,quoref")
    assert refused.status_code == 404 and "quoref" in refused.json()["detail"]
    assert client_for(lab_admin).get("/api/results/?projects=nowhere").status_code == 404
    validator = member(Project.objects.get(slug="perspectrum"), "vic", "validator")
    assert client_for(validator).get("/api/results/").status_code == 404
    assert client_for(validator).post("/api/results/score/", {}).status_code == 404


@pytest.mark.parametrize(
    ("query", "field"),
    [("projects=boolq,,x", "projects"), ("projects=no%20such!", "projects"),
     ("split=validation", "split"), ("format=xlsx", "format"), ("by=model", "by"),
     ("releases=first", "releases")],
)  # fmt: skip
def test_a_bad_value_is_a_400_with_its_reason(lab, query, field):
    api, _, _ = lab
    answer = api.get(f"/api/results/?{query}")
    assert answer.status_code == 400, answer.content
    assert answer.json()["field"] == field and answer.json()["detail"]


def test_score_the_missing_cells_queues_exactly_them(lab):
    api, _, _ = lab
    boolq, perspectrum = Project.objects.get(slug="boolq"), Project.objects.get(slug="perspectrum")
    for project in (boolq, perspectrum):  # a model that shards, in both
        ModelSpec.objects.create(project=project, name="bert", kind="hf-sequence-classification",
                                 source="bert-base-uncased")  # fmt: skip
    rules = {p.slug: ModelSpec.objects.create(project=p, name="rules", kind="python",
                                              source="tests.evaluation.rule_models:keyword")
             for p in (boolq, perspectrum)}  # fmt: skip
    on_its_way = EvaluationRun.objects.create(
        release=boolq.releases.get(), model=rules["boolq"], split="test"
    )
    table = api.get("/api/results/?projects=boolq,perspectrum,quoref").json()
    assert table["missing"] == 3
    assert table["rows"][0]["cells"]["rules"]["status"] == "running"
    assert table["rows"][2]["cells"]["bert"]["status"] == "absent"  # Quoref has no bert

    before = set(EvaluationRun.objects.values_list("pk", flat=True))
    asked = {"projects": "boolq,perspectrum,quoref", "split": "test", "shards": 4}
    answer = api.post("/api/results/score/", asked, format="json")
    assert answer.status_code == 202, answer.json()
    made = EvaluationRun.objects.exclude(pk__in=before)
    assert sorted((r.release.project.slug, r.model.name, r.shards, r.status) for r in made) == [
        ("boolq", "bert", 4, "queued"),
        ("perspectrum", "bert", 4, "queued"),
        ("perspectrum", "rules", 1, "queued"),  # a python model runs in one piece
    ]
    assert sorted(r["id"] for r in answer.json()["queued"]) == sorted(r.pk for r in made)
    assert on_its_way.pk in before and answer.json()["refused"] == []
    again = api.post("/api/results/score/", {"projects": "boolq,perspectrum"}, format="json")
    assert again.status_code == 202 and again.json()["queued"] == []


def test_rows_per_tag_hold_each_tags_own_figures(lab):
    api, _, runs = lab
    table = api.get("/api/results/?projects=perspectrum,quoref&by=tag").json()
    tagged = [row for row in table["rows"] if row["tag"]]
    assert {row["project"] for row in tagged} == {"perspectrum", "quoref"}
    for row in tagged:
        for model, cell in row["cells"].items():
            metrics = runs[row["project"], model].metrics
            own = metrics["per_tag"].get(row["tag"])
            if own is None:
                assert cell["figures"] == {}
                continue
            key = "perturbed_f1" if "f1" in own else "perturbed_accuracy"
            figure = cell["figures"][key]
            assert figure["value"] == own.get("f1", own.get("accuracy"))
            assert figure["n"] == own["count"]
            assert figure["interval"] == metrics["intervals"]["per_tag"][row["tag"]]
    untagged = [row["project"] for row in table["rows"] if not row["tag"]]
    assert untagged == ["perspectrum", "quoref"]


def test_the_page_shows_the_table_and_queues_from_it(lab, client):
    _, root, runs = lab
    client.force_login(root)
    page = client.get("/results/?projects=boolq&projects=quoref")
    text = page.content.decode()
    assert page.status_code == 200
    run = runs["quoref", "predictions: model_b.jsonl"]
    assert f'href="/p/quoref/evaluations/{run.pk}/"' in text
    assert f"{run.metrics['perturbed_f1'] * 100:.1f}%" in text
    assert "perspectrum" not in text.split('id="results-table"')[1]
    boolq = Project.objects.get(slug="boolq")
    ModelSpec.objects.create(project=boolq, name="rules", kind="python", source="a.b:c")
    text = client.get("/results/?projects=boolq").content.decode()
    assert "Score the 1 missing cell" in text
    done = client.post("/results/score/", {"projects": "boolq", "split": "test", "shards": "1"})
    assert done.status_code == 302
    assert EvaluationRun.objects.filter(model__name="rules", status="queued").count() == 1
    assert client.get("/").content.decode().count('id="results-table-link"') == 1


def test_a_tags_row_counts_the_sets_holding_that_tag(lab, client):
    api, root, _ = lab
    client.force_login(root)
    table = api.get("/api/results/?projects=perspectrum,quoref&by=tag").json()
    for row in (r for r in table["rows"] if r["tag"]):
        release = Release.objects.get(pk=row["release"])
        holding = {e["set_id"] for e in read_examples(release, "test") if row["tag"] in e["tags"]}
        assert row["sets"] == len(holding) > 0
    page = client.get("/results/?projects=quoref&by=tag").content.decode()
    assert "original accuracy and consistency have no value per tag" in page


def test_a_model_whose_runs_all_failed_shows_failed_and_links_the_newest(lab, client):
    api, root, _ = lab
    client.force_login(root)
    quoref = Project.objects.get(slug="quoref")
    typo = ModelSpec.objects.create(project=quoref, name="rules", kind="python", source="no.such:x")
    release = quoref.releases.get()
    older, newest = (
        EvaluationRun.objects.create(release=release, model=typo, split="test", status="failed")
        for _ in range(2)
    )
    cell = api.get("/api/results/?projects=quoref").json()["rows"][0]["cells"]["rules"]
    assert cell["status"] == "failed" and cell["run"] == newest.pk != older.pk
    assert cell["url"] == f"/p/quoref/evaluations/{newest.pk}/" and cell["queueable"]
    page = client.get("/results/?projects=quoref").content.decode()
    assert f'<a href="/p/quoref/evaluations/{newest.pk}/" class="status status-failed"' in page
    markdown = api.get("/api/results/?projects=quoref&format=md").content.decode()
    row = next(line for line in markdown.splitlines() if line.startswith("| Quoref"))
    figures = len(ANSWERED)
    assert row.endswith(" |" + " \u2013 |" * figures)  # the failed cell: a dash per figure
    assert "rules on Quoref contrast sets 1: failed" in markdown
    latex = api.get("/api/results/?projects=quoref&format=tex").content.decode()
    assert "rules & " + " & ".join(["--"] * figures) + r" \\" in latex


def test_a_chosen_project_without_the_split_is_named_as_left_out(lab, client):
    api, root, _ = lab
    client.force_login(root)
    ProjectFactory(slug="empty", name="No release yet")
    answer = api.get("/api/results/?projects=boolq,empty").json()
    assert [row["project"] for row in answer["rows"]] == ["boolq"]
    assert answer["left_out"] == [
        {"project": "empty", "project_name": "No release yet", "reason": "no release yet"}
    ]
    dev = api.get("/api/results/?projects=boolq&split=dev").json()
    assert dev["left_out"][0]["reason"] == "no release has a dev split"
    page = client.get("/results/?projects=boolq&projects=empty").content.decode()
    assert "Left out: No release yet (no release yet)." in page


def test_intervals_left_out_on_asking_and_refused_when_malformed(lab, client):
    api, root, runs = lab
    client.force_login(root)
    base = "/api/results/?projects=boolq"
    rows = list(csv.DictReader(io.StringIO(api.get(base + "&format=csv&intervals=0").text)))
    model = "predictions: model_a.jsonl"
    assert f"{model}: consistency low" not in rows[0] and rows[0][f"{model}: consistency n"]
    run = runs["boolq", model]
    low, high = run.metrics["intervals"]["consistency"]
    shown = client.get("/results/?projects=boolq").content.decode()
    assert f"[{low * 100:.1f}%, {high * 100:.1f}%]" in shown
    left = client.get("/results/?projects=boolq&intervals=0").content.decode()
    assert f"[{low * 100:.1f}%, {high * 100:.1f}%]" not in left and "intervals=0" in left
    refused = api.get(base + "&intervals=no")
    assert refused.status_code == 400 and refused.json()["field"] == "intervals"
