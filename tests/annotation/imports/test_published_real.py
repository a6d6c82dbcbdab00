"""Gardner et al.'s published files exactly as allenai/contrast-sets publishes them (in
../shared/data/, never copied here), each imported in one step with no edit: the counts are
the paper's Table 2 (Gardner et al., 2020), or the file's own where the file holds fewer, with
the reason. Without the folder these tests skip, except in CI (CI=1), where they fail."""

import csv
import os
from pathlib import Path
from typing import Any

import pytest

from annotation.imports.published.services import import_published
from annotation.models import Example, ImportBatch, Perturbation
from tests.conftest import SHARED_DATA
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

GARDNER = SHARED_DATA / "gardner-contrast-sets"
IMDB = SHARED_DATA / "imdb-contrast"

# dataset: (files in the dataset's order, Table 2's sets, Table 2's examples, as counted here)
TABLE_2 = {
    "nlvr2": (["contrast_set_nlvr2.jsonl"], 479, 994),
    "matres": (["Platinum_subset_minimal_pairs.csv"], 239, 401),
    "quoref": (["quoref_original_subset_20191206_merged.json",
                "quoref_test_perturbations_20191206_merged.json"], 415, 700),
    "ropes": (["ropes_contrast_set_original_032820.json", "ropes_contrast_set_032820.json"],
              974, 974),
    "perspectrum": (["perspectrum_contrast_sets.csv"], 217, 217),
    "drop": (["drop_contrast_sets_test.json"], 623, 947),
}  # fmt: skip


def real(folder: Path) -> Path:
    if not folder.is_dir():
        if os.environ.get("CI") == "1":
            pytest.fail(f"{folder} is missing: CI runs with ../shared/data beside the clone.")
        pytest.skip(f"{folder} is absent (the real data stays outside the repository)")
    return folder


def files_of(folder: Path, names: list[str]) -> list[tuple[str, bytes]]:
    return [(Path(n).name, (real(folder) / n).read_bytes()) for n in names]


@pytest.fixture
def root(db, settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"
    return UserFactory(username="root", is_staff=True, is_superuser=True)


@pytest.mark.parametrize("dataset", sorted(TABLE_2))
def test_each_real_file_imports_unchanged_with_table_2s_counts(dataset, root):
    names, sets, examples = TABLE_2[dataset]
    result = import_published(dataset=dataset, files=files_of(GARDNER, names), user=root)
    assert result.test_counts == (sets, examples)
    assert result.matches_paper and "the same" in result.summary()
    assert Example.objects.filter(project=result.project).count() == sets
    perturbations = examples - (sets if dataset == "nlvr2" else 0)
    assert Perturbation.objects.filter(project=result.project).count() == perturbations


def test_boolq_gives_the_files_own_counts_beside_the_papers(root):
    result = import_published(
        dataset="boolq", files=files_of(GARDNER, ["boolq_perturbed.json"]), user=root
    )
    # The file holds 68 entries with non-empty perturbations, 335 of them (the paper: 70, 339).
    assert result.test_counts == (68, 335) and not result.matches_paper
    assert "The paper's Table 2: 70 sets, 339 perturbations; here on test: 68 sets, 335." in (
        result.summary()
    )
    assert any("its answer neither true nor false (at data[0])" in n for n in result.notes)


def _questions(rows: list[list[str]]) -> dict[str, int]:
    """Each row's index -> the number of its question (runs of one sentence1), in file order."""
    out, number, last = {}, -1, None
    for index, sentence, _, _ in rows:
        key = " ".join(sentence.split())
        number += key != last
        out[index], last = number, key
    return out


def test_mctaco_pairs_each_perturbed_row_within_its_own_question(root):
    names = ["mctaco/original.tsv", "mctaco/changed.tsv"]
    result = import_published(dataset="mctaco", files=files_of(GARDNER, names), user=root)
    import csv
    import io

    original, changed = (
        list(csv.reader(io.StringIO((GARDNER / n).read_text()), delimiter="\t"))[1:] for n in names
    )
    # Every row of original.tsv is kept as published (751), those with no perturbation as sets
    # of one: a question's exact match counts every candidate of the file.
    sets, perturbed = result.test_counts
    assert perturbed == len(changed) == 646 and sets == len(original) == 751
    pivots = Example.objects.filter(project=result.project)
    assert sorted(pivots.values_list("external_id", flat=True)) == sorted(r[0] for r in original)
    alone = pivots.filter(perturbations__isnull=True).count()
    assert alone == 751 - 640  # 640 candidates have a perturbation (6 have two)
    assert any("with no perturbation: each a set of one" in n for n in result.notes)
    question_of_original, question_of_changed = _questions(original), _questions(changed)
    assert len(set(question_of_original.values())) == 100 == len(set(question_of_changed.values()))
    pairs = Perturbation.objects.filter(project=result.project).values_list(
        "external_id", "pivot__external_id"
    )
    assert len(pairs) == 646
    assert all(question_of_changed[p] == question_of_original[o] for p, o in pairs)
    # Where both files have a k-th candidate, the k-th pairs with the k-th.
    assert ("1", "1") in set(pairs) and ("0", "0") in set(pairs)
    labels = set(
        Perturbation.objects.filter(project=result.project).values_list("label", flat=True)
    )
    assert labels == {"no", "yes"}  # "no " (changed.tsv line 635) read as "no"


def test_matres_reasons_become_every_tag_they_name(root):
    result = import_published(
        dataset="matres", files=files_of(GARDNER, TABLE_2["matres"][0]), user=root
    )
    with (GARDNER / TABLE_2["matres"][0][0]).open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    empty = [
        r for r in rows if not r["modified bodygraph"].strip() or not r["new decision"].strip()
    ]
    assert len(empty) == 23
    [note] = result.notes
    assert note.startswith("23 row(s) left out, with no modified bodygraph or new decision (at ")
    # Each row left out is a skipped line of the batch, with its line in the file (Earlier
    # imports: "Skipped 23"), and the summary counts them.
    batch = ImportBatch.objects.get(pk=result.batch)
    assert len(batch.skipped) == 23 and all(isinstance(r["line"], int) for r in batch.skipped)
    assert "23 row(s) of the files left out." in result.summary()
    tags = set(result.project.tags.values_list("name", flat=True))
    assert {"verb change", "tense", "indicator", "appearance order", "timex deleted"} <= tags
    several = Perturbation.objects.filter(project=result.project, tags__name="appearance order")
    several = several.filter(tags__name="indicator").filter(tags__name="tense")
    assert several.count() >= 2  # "appearance order, indicator, tense" (2 rows), and more


def _read_only_edits(dataset: str) -> int:
    """How many published perturbations change the field the template makes read-only,
    counted from the files as their own scripts pair them."""
    import json

    def questions(name: str) -> list[tuple[dict, dict]]:
        data = json.loads((GARDNER / name).read_text())["data"]
        return [(p, q) for a in data for p in a["paragraphs"] for q in p["qas"]]

    originals, perturbed = (questions(n) for n in TABLE_2[dataset][0])
    if dataset == "ropes":
        return sum(o["background"] != c["background"]
                   for (o, _), (c, _) in zip(originals, perturbed, strict=True))  # fmt: skip
    context = {q["id"]: p["context"] for p, q in originals}
    return sum(p["context"] != context[q["original_id"]] for p, q in perturbed)


@pytest.mark.parametrize(("dataset", "field"), [("quoref", "context"), ("ropes", "background")])
def test_edits_of_read_only_fields_are_kept_with_their_warning(dataset, field, root):
    result = import_published(
        dataset=dataset, files=files_of(GARDNER, TABLE_2[dataset][0]), user=root
    )
    edits = _read_only_edits(dataset)
    assert edits > 0
    said = f"{edits} perturbations: the edit changes the read-only field {field!r}, kept as"
    rows = [w for w in result.warnings if w.message.startswith(said)]
    assert [(w.count, len(w.places)) for w in rows] == [(edits, edits)], result.warnings[:3]
    batch = result.project.import_batches.get(pk=result.batch)
    assert len(batch.warnings) == result.warning_count == sum(w.count for w in result.warnings)


def test_drop_without_its_test_set_waits_for_the_originals_answers(root, client_for):
    result = import_published(
        dataset="drop", files=files_of(GARDNER, TABLE_2["drop"][0]), user=root
    )
    waiting = Example.objects.filter(project=result.project, answers=[])
    assert waiting.count() == 623 and all(e.waits_for_answer for e in waiting[:5])
    assert any("write each in the editor" in note for note in result.notes)
    made = client_for(root).post(
        f"/api/projects/{result.project.slug}/releases/", {"version": "1"}, format="json"
    )
    assert made.status_code == 400  # nothing can be released before an original has its answer
    # An expert holding a pivot writes its answer on the editor's page; then its set releases.
    from django.test import Client

    from annotation.authoring.services.claims import pivot_claim

    pivot = waiting.order_by("external_id").first()
    expert = member_of(result.project, "expert")
    browser = Client()
    browser.force_login(expert)
    slug = result.project.slug
    page = browser.get(f"/p/{slug}/pivots/{pivot.pk}/edit/").content.decode()
    assert "The original waits for its answer" not in page  # not held: nothing to write yet
    pivot_claim(pivot=pivot, expert=expert)
    page = browser.get(f"/p/{slug}/pivots/{pivot.pk}/edit/").content.decode()
    assert "The original waits for its answer" in page
    browser.post(f"/p/{slug}/pivots/{pivot.pk}/answer/", {"answers": "1565\nwarships | soldiers"})
    pivot.refresh_from_db()
    assert pivot.answers == ["1565", ["warships", "soldiers"]]
    made = client_for(root).post(f"/api/projects/{slug}/releases/", {"version": "1"}, format="json")
    assert made.status_code == 201, made.json()
    from annotation.models import Release

    release = Release.objects.get(pk=made.json()["id"])
    assert release.counts["sets"] == {"test": 1}
    assert (
        len(release.counts["waiting_for_answer"]) == 622
        and pivot.external_id not in (release.counts["waiting_for_answer"])
    )
    import zipfile

    from django.conf import settings

    with zipfile.ZipFile(Path(settings.MEDIA_ROOT) / release.bundle) as bundle:
        card = bundle.read("README.md").decode()
    assert "622 set(s) are left out: their original waits for its answer." in card
    assert "token F1, by DROP's rules" in card  # the project's rules, not SQuAD's


def member_of(project, role):  # type: ignore[no-untyped-def]
    from tests.factories import member

    return member(project, f"someone-{role}", role)


def test_boolqs_repeats_survive_the_generic_sets_jsonl_import(root, client_for):
    """BoolQ's file through the generic sets.jsonl import keeps what the published import
    keeps: a perturbation repeated in its set is released twice (68 originals + 335)."""
    import json
    import zipfile

    from django.conf import settings
    from django.core.files.uploadedfile import SimpleUploadedFile

    from annotation.models import Release
    from annotation.projects.services import project_create

    entries = json.loads((real(GARDNER) / "boolq_perturbed.json").read_text())["data"][1:]
    lines = []
    for n, e in enumerate(entries):
        fields = {k: e[k] for k in ("title", "paragraph", "question")}
        asked = [q for q in e["perturbed_questions"] if q["perturbed_q"].strip()]
        edits = [{"fields": {**fields, "question": q["perturbed_q"]}, "label": q["answer"],
                  "tags": ["boolq"]} for q in asked]  # fmt: skip
        if edits:
            lines.append({"set_id": f"b{n}", "original": {"id": f"b{n}", "fields": fields,
                          "label": str(e["answer"])}, "perturbations": edits})  # fmt: skip
    project_create(
        user=root, slug="boolq", name="BoolQ", task_type="classification",
        fields=[{"name": n, "editable": n == "question"}
                for n in ("title", "paragraph", "question")],
        labels=["false", "true"], tags=[{"name": "boolq"}],
        settings={"require_label_change": False},
    )  # fmt: skip
    api = client_for(root)
    content = "\n".join(json.dumps(line) for line in lines).encode()
    upload = SimpleUploadedFile("boolq.jsonl", content)
    answer = api.post("/api/projects/boolq/import/sets/",
                      {"format": "sets_jsonl", "accept": "true", "file": upload},
                      format="multipart")  # fmt: skip
    assert answer.status_code == 201, answer.json()
    assert (
        answer.json()["perturbations"] == sum(len(line["perturbations"]) for line in lines) == 335
    )
    assert any("both are kept" in w["message"] for w in answer.json()["warnings"])
    made = api.post("/api/projects/boolq/releases/", {"version": "1"}, format="json")
    release = Release.objects.get(pk=made.json()["id"])
    with zipfile.ZipFile(Path(settings.MEDIA_ROOT) / release.bundle) as bundle:
        assert len(bundle.read("examples.jsonl").splitlines()) == 68 + 335


def test_nlvr2s_sets_of_one_are_released_and_scored_as_eval_py_scores_them(root, client_for):
    """NLVR2's one-line groups are sets of one: in the release (479 sets, 994 examples) and in
    consistency, right when their one prediction is (eval.py's groups, rewritten here from the
    file: identifiers that differ only in their last two characters)."""
    import json
    import random
    from collections import defaultdict

    from annotation.models import Release
    from annotation.releases.bundle import read_examples
    from evaluation.runs.execute import run_evaluation

    name = "contrast_set_nlvr2.jsonl"
    import_published(dataset="nlvr2", files=files_of(GARDNER, [name]), user=root)
    api = client_for(root)
    made = api.post("/api/projects/nlvr2/releases/", {"version": "1"}, format="json")
    assert made.status_code == 201, made.json()
    release = Release.objects.get(pk=made.json()["id"])
    assert release.counts["sets"] == {"test": 479} and release.counts["sets_of_one"] == {"test": 21}
    examples = read_examples(release, "test")
    assert len(examples) == 994
    lines = [json.loads(line) for line in (GARDNER / name).read_text().splitlines()]
    rng = random.Random(3)
    guess = {r["identifier"]: str(r["label"] if rng.random() < 0.8 else not r["label"]).lower()
             for r in lines}  # fmt: skip
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in lines:
        groups[r["identifier"][:-2]].append(guess[r["identifier"]] == str(r["label"]).lower())
    expected = sum(map(all, groups.values())) / len(groups)
    content = "\n".join(json.dumps({"id": e["id"], "role": e["role"], "prediction": guess[e["id"]]})
                        for e in examples).encode()  # fmt: skip
    from django.core.files.uploadedfile import SimpleUploadedFile

    body = {"release": release.pk, "split": "test",
            "predictions": SimpleUploadedFile("p.jsonl", content)}  # fmt: skip
    answer = api.post("/api/evaluations/", body, format="multipart")
    assert answer.status_code == 202, answer.json()
    run = run_evaluation(answer.json()["id"])
    assert run.metrics["counts"]["sets"] == 479
    assert run.metrics["consistency"] == pytest.approx(expected)


def test_quoref_keeps_both_copies_of_a_question_listed_under_two_originals(root):
    """Two ids of the perturbations' file each name one question under two originals; a run
    crashed on them (two predictions for one example). Both are kept, each under its own id."""
    import json

    names = TABLE_2["quoref"][0]
    result = import_published(dataset="quoref", files=files_of(GARDNER, names), user=root)
    published = json.loads((real(GARDNER) / names[1]).read_text())
    ids = [qa["id"] for a in published["data"] for p in a["paragraphs"] for qa in p["qas"]]
    repeated = {i for i in ids if ids.count(i) > 1}
    assert len(ids) == 700 and len(repeated) == 2
    kept = list(
        Perturbation.objects.filter(project=result.project).values_list("external_id", flat=True)
    )
    assert len(kept) == len(set(kept)) == 700
    assert {f"{i}-2" for i in repeated} <= set(kept) and repeated <= set(kept)
    assert any("repeat an id" in note for note in result.notes)


def _quoref_ids_and_lines() -> tuple[dict[str, Any], dict[str, list[int]], list[dict[str, Any]]]:
    """Read independently of the import: each perturbation's original id, the lines of the
    file whose key is "id" (by id, in order), and the perturbations with their fields."""
    import json

    names = TABLE_2["quoref"][0]
    text = (real(GARDNER) / names[1]).read_text()
    lines: dict[str, list[int]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        key, _, value = line.strip().partition(": ")
        if key == '"id"':
            lines.setdefault(json.loads(value.rstrip(",")), []).append(n)
    originals = {
        q["id"]: (p["context"], q["question"])
        for a in json.loads((real(GARDNER) / names[0]).read_text())["data"]
        for p in a["paragraphs"] for q in p["qas"]
    }  # fmt: skip
    perturbed = [
        {"id": q["id"], "original": originals[q["original_id"]],
         "edit": (p["context"], q["question"])}
        for a in json.loads(text)["data"] for p in a["paragraphs"] for q in p["qas"]
    ]  # fmt: skip
    return originals, lines, perturbed


def test_quorefs_warnings_add_up_and_name_each_question_by_its_id_and_line(root):
    """The walk of issue 59: "9 warnings" over rows of 2 ids, 56 edits and 7 edits; "First line"
    a dash on every row; places as JSON paths; "and 51 more" listed nowhere. Now each warning
    is one question, named by its id and the line of its "id" in the file; the rows' counts
    add up to the total, and every place is listed."""
    result = import_published(dataset="quoref", files=files_of(GARDNER, TABLE_2["quoref"][0]),
                              user=root)  # fmt: skip
    _, lines, perturbed = _quoref_ids_and_lines()
    squash = lambda texts: tuple("".join(t.split()) for t in texts)  # noqa: E731
    context_edits = sum(p["edit"][0] != p["original"][0] for p in perturbed)
    identical = sum(squash(p["edit"]) == squash(p["original"]) for p in perturbed)
    repeats = sum(len(found) - 1 for found in lines.values())
    assert (repeats, context_edits, identical) == (2, 56, 7)  # the figures, read here
    counts = sorted(w.count for w in result.warnings)
    assert counts == sorted([repeats, context_edits, identical])
    batch = ImportBatch.objects.get(pk=result.batch)
    assert result.warning_count == sum(counts) == len(batch.warnings) == 65
    # each stored warning: the question's id (the second copy renamed <id>-2) and its line
    for w in batch.warnings:
        given, copy = (w["id"][:-2], 2) if w["id"].endswith("-2") else (w["id"], 1)
        assert w["line"] == lines[given][copy - 1], w
    # every place of every row listed, as "<id> (line N)"
    for row in result.warnings:
        assert len(row.places) == row.count and all(" (line " in p for p in row.places)
    listed = {p for row in result.warnings for p in row.places}
    assert listed == {f"{w['id']} (line {w['line']})" for w in batch.warnings}


def test_drops_warnings_add_up_and_name_each_question_by_its_query_id_and_line(root):
    """DROP's file is laid out over lines too: each warning names its question by its
    query_id and the line of that query_id, and the rows' counts add up to the total."""
    result = import_published(dataset="drop", files=files_of(GARDNER, TABLE_2["drop"][0]),
                              user=root)  # fmt: skip
    text = (real(GARDNER) / TABLE_2["drop"][0][0]).read_text().splitlines()
    lines = {line.split('"')[3]: n for n, line in enumerate(text, 1)
             if line.strip().startswith('"query_id"')}  # fmt: skip
    batch = ImportBatch.objects.get(pk=result.batch)
    assert result.warning_count == sum(w.count for w in result.warnings) == len(batch.warnings)
    assert batch.warnings and all(w["line"] == lines[w["id"]] for w in batch.warnings)
