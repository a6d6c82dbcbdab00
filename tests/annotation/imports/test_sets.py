import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import ImportBatch, Perturbation

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def import_sets(client, project, **files_and_fields):  # type: ignore[no-untyped-def]
    return client.post(
        f"/api/projects/{project.slug}/import/sets/", files_and_fields, format="multipart"
    )


def test_sets_jsonl_import_sends_sets_to_validation(project, people, client_for):
    line = {
        "set_id": "s-1", "split": "dev",
        "original": {"id": "ex-1", "fields": {"text": "A good film."}, "label": "positive"},
        "perturbations": [{"fields": {"text": "A bad film."}, "label": "negative",
                           "tags": ["negation"]}],
    }  # fmt: skip
    response = import_sets(
        client_for(people["admin"]), project, format="sets_jsonl",
        file=SimpleUploadedFile("sets.jsonl", json.dumps(line).encode()), author="team-b",
    )  # fmt: skip
    assert response.status_code == 201, response.json()
    perturbation = Perturbation.objects.get()
    assert perturbation.status == "submitted" and perturbation.author.username == "pseudo-team-b"
    assert not perturbation.author.is_active
    assert perturbation.item.split == "dev"
    assert [t.name for t in perturbation.tags.all()] == ["negation"]


GOOD_SET: dict[str, Any] = {
    "original": {"id": "o1", "fields": {"text": "A good film."}, "label": "positive"},
    "perturbations": [
        {"fields": {"text": "A bad film."}, "label": "negative", "tags": ["negation"]}
    ],
}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (
            {**GOOD_SET, "perturbations": [{"fields": {"text": "A bad film."}, "label": "meh"}]},
            "unknown label 'meh'",
        ),
        (
            {**GOOD_SET, "perturbations": [{"fields": {"text": " "}, "label": "negative"}]},
            "perturbation: field 'text' is empty",
        ),
        (
            {
                **GOOD_SET,
                "perturbations": [{"fields": {"text": "x" * 20_001}, "label": "negative"}],
            },
            "has 20,001 characters; the limit is 20,000",
        ),
        ({**GOOD_SET, "original": {**GOOD_SET["original"], "id": "i" * 256}}, "longer than 255"),
        (
            {**GOOD_SET, "perturbations": [{**GOOD_SET["perturbations"][0], "id": "p" * 256}]},
            "a perturbation's id is longer than 255",
        ),
        (
            {
                **GOOD_SET,
                "perturbations": [{"fields": {"text": "A good  film."}, "label": "negative"}],
            },
            "identical to its original",
        ),
        ({**GOOD_SET, "perturbations": {}}, "perturbations must be a list"),
        (
            {
                **GOOD_SET,
                "perturbations": [
                    {"fields": {"text": "A bad film."}, "label": "negative", "tags": ["sarcasm"]}
                ],
            },
            "unknown tag 'sarcasm'",
        ),
        ({"set_id": "x"}, "'original' object"),
        ({**GOOD_SET, "split": "holdout"}, "unknown split"),
    ],
)
def test_bad_sets_jsonl_is_rejected_with_line_and_nothing_imported(
    project, people, client_for, bad, message
):
    content = (json.dumps({**GOOD_SET, "original": {**GOOD_SET["original"], "id": "o0"}})
               + "\n" + json.dumps(bad)).encode()  # fmt: skip
    upload = SimpleUploadedFile("s.jsonl", content)
    response = import_sets(client_for(people["admin"]), project, format="sets_jsonl",
                           file=upload, tags="negation", strict="true")  # fmt: skip
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert errors[0]["line"] == 2 and message in errors[0]["message"], errors
    assert not Perturbation.objects.exists() and not project.examples.exists()


def test_a_perturbation_without_tags_and_no_default_is_refused(project, people, client_for):
    untagged = {**GOOD_SET, "perturbations": [{**GOOD_SET["perturbations"][0], "tags": []}]}
    upload = SimpleUploadedFile("s.jsonl", json.dumps(untagged).encode())
    response = import_sets(client_for(people["admin"]), project, format="sets_jsonl", file=upload)
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"line": 1, "message": "each perturbation needs at least one tag."}
    ]
    assert not Perturbation.objects.exists() and not project.examples.exists()


def test_importing_the_same_sets_twice_creates_nothing_the_second_time(project, people, client_for):
    content = json.dumps(GOOD_SET).encode()
    admin = client_for(people["admin"])
    first, again = [{"perturbations": n, "already_present": 1 - n, "warnings": []} for n in (1, 0)]
    for code, expected in ((201, first), (200, again)):
        response = import_sets(admin, project, format="sets_jsonl",
                               file=SimpleUploadedFile("s.jsonl", content))  # fmt: skip
        answer = response.json()
        assert (response.status_code, answer) == (code, {**expected, "warning_count": 0,
                                                       "batch": answer["batch"]})  # fmt: skip
    assert Perturbation.objects.count() == 1 and project.examples.count() == 1


@pytest.mark.parametrize(
    ("original", "contrast", "line", "message"),
    [
        (
            "label\ttext\npositive\tGood.\npositive\tFine.\n",
            "label\ttext\nnegative\tBad.\n",
            3,
            "the originals file has 2 rows but the contrast file has 1",
        ),
        (
            "label\ttext\npositive\tGood.\n",
            "label\ttext\nmeh\tBad.\n",
            2,
            "contrast file: unknown label 'meh'",
        ),
        (
            "label\ttext\npositive\tGood.\n",
            "label\ttext\nnegative\t \n",
            2,
            "contrast file: field 'text' is empty",
        ),
        (
            "label\ttext\npositive\tGood.\n",
            "label\ttext\nnegative\tGood.\n",
            2,
            "identical to its original",
        ),
        (
            "label\ttext\npositive\tGood.\n",
            "label\tbody\nnegative\tBad.\n",
            1,
            "contrast file: the header lacks 'text'",
        ),
    ],
)
def test_bad_paired_tsv_is_rejected_with_line_and_nothing_imported(
    project, people, client_for, original, contrast, line, message
):
    response = import_sets(
        client_for(people["admin"]), project, format="paired_tsv",
        original=SimpleUploadedFile("o.tsv", original.encode()),
        contrast=SimpleUploadedFile("c.tsv", contrast.encode()), accept="true", tags="negation",
        strict="true",
    )  # fmt: skip
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert errors[0]["line"] == line and message in errors[0]["message"], errors
    assert not Perturbation.objects.exists() and not project.examples.exists()


def test_paired_tsv_takes_tags_from_a_column(project, people, client_for):
    response = import_sets(
        client_for(people["admin"]), project, format="paired_tsv",
        original=SimpleUploadedFile("o.tsv", b"label\ttext\npositive\tGood film.\n"),
        contrast=SimpleUploadedFile(
            "c.tsv", b"label\ttext\tTags\nnegative\tBad film.\tnegation, intensity\n"
        ),
        mapping=json.dumps({"tags": "Tags"}), accept="true",
    )  # fmt: skip
    assert response.status_code == 201, response.json()
    assert sorted(Perturbation.objects.get().tags.values_list("name", flat=True)) == [
        "intensity", "negation",
    ]  # fmt: skip


def test_published_edits_that_keep_the_label_import_with_warnings_and_release_truthfully(
    project, people, client_for, settings, tmp_path
):
    """Gardner et al.'s edits usually change the label, not always, and BoolQ's contrast sets
    hold a question identical to its original: keep them, warn, and say so in the release."""
    settings.MEDIA_ROOT = tmp_path / "media"
    kept = {"original": {"id": "k1", "fields": {"text": "A good film."}, "label": "Positive"},
            "perturbations": [{"fields": {"text": "A fine film."}, "label": "POSITIVE",
                               "tags": ["negation"]}]}  # fmt: skip
    same = {"original": {"id": "s1", "fields": {"text": "A dull film."}, "label": "negative"},
            "perturbations": [{"fields": {"text": "A dull  film."}, "label": "positive",
                               "tags": ["negation"]}]}  # fmt: skip
    content = "\n".join(json.dumps(s) for s in (GOOD_SET, kept, same)).encode()
    warned = [
        {"line": 2, "message": "the label must differ from the original's (positive)."},
        {"line": 3, "message": "the edit is identical to its original (whitespace aside)."},
    ]
    admin = client_for(people["admin"])
    strict = import_sets(admin, project, format="sets_jsonl", strict="true",
                         file=SimpleUploadedFile("s.jsonl", content))  # fmt: skip
    assert strict.status_code == 400 and strict.json()["errors"] == warned
    response = import_sets(admin, project, format="sets_jsonl", accept="true",
                           file=SimpleUploadedFile("s.jsonl", content))  # fmt: skip
    assert response.status_code == 201, response.json()
    # one row per kind, each saying how many and where
    assert response.json()["warnings"] == [
        {**w, "count": 1, "places": [f"line {w['line']}"]} for w in warned
    ]
    release = admin.post(f"/api/projects/{project.slug}/releases/", {"version": "1"}, format="json")
    assert release.status_code == 201, release.json()
    from annotation.models import Release
    from annotation.releases.bundle import read_examples, read_sets

    stored = Release.objects.get(pk=release.json()["id"])
    changed = {r.set_id: [p["label_changed"] for p in r.perturbations] for r in read_sets(stored)}
    assert changed == {"o1": [True], "k1": [False], "s1": [True]}
    perturbed = [e for e in read_examples(stored, "test") if e["role"] == "perturbed"]
    assert len(perturbed) == 3
    assert stored.counts["label_changed"] == {"test": 2}
    card = Path(settings.MEDIA_ROOT, stored.bundle)
    text = zipfile.ZipFile(card).read("README.md").decode()
    assert "2 perturbations change the gold label and 1 keep it" in text
    assert "| test | 3 | 3 | 2 | 1 |" in text


def test_label_values_map_and_match_case_and_errors_are_grouped(project, people, client_for):
    admin = client_for(people["admin"])
    url = f"/api/projects/{project.slug}/examples/import/"
    rows = "Text\tSentiment\n" + "".join(f"Review {n}.\tNeg\n" for n in range(60))
    mapping = json.dumps({"text": "Text", "label": "Sentiment"})
    refused = admin.post(
        url, {"file": SimpleUploadedFile("r.tsv", rows.encode()), "mapping": mapping}
    )
    assert refused.status_code == 400
    (grouped,) = refused.json()["errors"]
    assert grouped["line"] == 2 and grouped["message"].startswith(
        "lines 2, 3, 4, 5, 6, 7, 8, 9, ..."
    )
    assert "(60 lines): unknown label 'Neg'" in grouped["message"]
    upload = SimpleUploadedFile("r.tsv", rows.encode())
    labels = json.dumps({"Neg": "negative"})
    mapped = admin.post(url, {"file": upload, "mapping": mapping, "labels": labels})
    assert mapped.status_code == 201 and mapped.json()["imported"] == 60
    capitals = "Text\tSentiment\nA good one.\tPositive\nA bad one.\tNEGATIVE\n"
    folded = admin.post(
        url, {"file": SimpleUploadedFile("c.tsv", capitals.encode()), "mapping": mapping}
    )
    assert folded.status_code == 201, folded.json()
    assert set(project.examples.values_list("label", flat=True)) == {"negative", "positive"}


@pytest.mark.parametrize("split", ["dev", "test"])
def test_gardner_tsvs_import_verbatim_through_the_page_into_lowercase_labels(
    shared_data, project, people, split, settings, tmp_path
):
    """Gardner et al.'s IMDb TSVs as published (headers Sentiment/Text, labels Negative and
    Positive) through the Import sets form, into a project whose labels are lowercase."""
    import csv

    from django.test import Client

    from annotation.models import Perturbation

    settings.MEDIA_ROOT = tmp_path / "media"
    assert sorted(project.labels) == ["negative", "positive"]
    paths = {role: shared_data / "imdb-contrast" / f"{split}_{role}.tsv"
             for role in ("original", "contrast")}  # fmt: skip
    page = Client()
    page.force_login(people["admin"])
    options = {"format": "paired_tsv", "split": split, "tags": "negation",
               "author": "gardner2020", "accept": "on"}  # fmt: skip
    with paths["original"].open("rb") as original, paths["contrast"].open("rb") as contrast:
        shown = page.post(f"/p/{project.slug}/import/sets/",
                          {**options, "original": original, "contrast": contrast})  # fmt: skip
    html = shown.content.decode()
    # The preview guesses Text and Sentiment, and matches Negative/Positive to the labels.
    assert '<option value="Text" selected>' in html
    assert '<option value="Sentiment" selected>' in html
    assert '<option value="negative" selected>' in html
    token = re.search(r'name="upload" value="(\w+)"', html)
    assert token is not None
    choices = {"upload": token.group(1), "map_text": "Text", "map_label": "Sentiment",
               "value_1": "Negative", "label_1": "negative", "value_2": "Positive",
               "label_2": "positive"}  # fmt: skip
    response = page.post(f"/p/{project.slug}/import/sets/",
                         {**options, **choices, "action": "import"}, follow=True)  # fmt: skip
    assert response.status_code == 200
    rows = {role: list(csv.DictReader(path.open(encoding="utf-8"), delimiter="\t"))
            for role, path in paths.items()}  # fmt: skip
    assert f"Imported {len(rows['contrast'])} perturbations" in response.content.decode()
    # Both files named, where the import is listed and in each warning (a pair's line)
    batch = ImportBatch.objects.get(project=project)
    assert batch.source_name == f"{split}_original.tsv, {split}_contrast.tsv"
    assert {w["file"] for w in batch.warnings} <= {batch.source_name}
    stored = Perturbation.objects.filter(project=project).select_related("pivot").order_by("id")
    assert [p.fields["text"] for p in stored] == [r["Text"] for r in rows["contrast"]]
    assert [p.pivot.fields["text"] for p in stored] == [r["Text"] for r in rows["original"]]
    assert [p.label for p in stored] == [r["Sentiment"].lower() for r in rows["contrast"]]
    assert {p.status for p in stored} == {"accepted"} and {p.pivot.split for p in stored} == {split}
    from annotation.releases.card import dataset_card
    from annotation.releases.services import release_create

    release = release_create(project=project, user=people["admin"], version="1")
    card = dataset_card(project, release)
    assert "imported as accepted" in card and "validated blind" not in card


def test_a_sets_file_past_the_row_limit_is_refused_with_its_line(
    project, people, client_for, settings
):
    """200,000 sets had no limit and answered 500 at gunicorn's timeout."""
    settings.IMPORT_MAX_ROWS = 2
    content = "\n".join(
        json.dumps(
            {**GOOD_SET, "set_id": f"s{n}", "original": {**GOOD_SET["original"], "id": f"o{n}"}}
        )
        for n in range(3)
    ).encode()
    upload = SimpleUploadedFile("s.jsonl", content)
    response = import_sets(
        client_for(people["admin"]), project, format="sets_jsonl", file=upload, tags="negation"
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"line": 3, "message": "more than 2 rows; that is the limit."}
    ]
    assert not Perturbation.objects.exists() and not project.examples.exists()


def test_a_perturbations_id_in_sets_jsonl_is_kept_and_released(
    project, people, client_for, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    line = {**GOOD_SET, "perturbations": [{**GOOD_SET["perturbations"][0], "id": "cs-7"}]}
    admin = client_for(people["admin"])
    answer = import_sets(admin, project, format="sets_jsonl", accept="true",
                         file=SimpleUploadedFile("s.jsonl", json.dumps(line).encode()))  # fmt: skip
    assert answer.status_code == 201, answer.json()
    assert Perturbation.objects.get().external_id == "cs-7"
    release = admin.post(f"/api/projects/{project.slug}/releases/", {"version": "1"},
                         format="json")  # fmt: skip
    assert release.status_code == 201, release.json()
    from annotation.models import Release
    from annotation.releases.bundle import read_examples

    ids = {(e["role"], e["id"]) for e in read_examples(Release.objects.get(), "test")}
    assert ids == {("original", "o1"), ("perturbed", "cs-7")}


def test_a_set_with_no_perturbation_is_kept_as_a_set_of_one_with_a_warning(
    project, people, client_for, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    alone = {"set_id": "a1", "original": {"id": "a1", "fields": {"text": "A fine film."},
                                          "label": "positive"}, "perturbations": []}  # fmt: skip
    content = "\n".join(json.dumps(s) for s in (GOOD_SET, alone)).encode()
    admin = client_for(people["admin"])
    response = import_sets(admin, project, format="sets_jsonl", accept="true",
                           file=SimpleUploadedFile("s.jsonl", content))  # fmt: skip
    assert response.status_code == 201, response.json()
    assert response.json()["warnings"] == [{"line": 2, "message": "set a1: the set has no "
        "perturbation: kept as a set of one (an original alone, consistent when it is right).",
        "count": 1, "places": ["a1 (line 2)"]}]  # fmt: skip
    made = admin.post(f"/api/projects/{project.slug}/releases/", {"version": "1"}, format="json")
    assert made.status_code == 201, made.json()
    assert made.json()["counts"]["sets"] == {"test": 2}
