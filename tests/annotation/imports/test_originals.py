import csv
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.errors import ImportRejected
from annotation.imports.services.originals import import_examples
from annotation.models import AuditLog, Example, ImportBatch
from tests.factories import ExampleFactory, ProjectFactory

pytestmark = pytest.mark.django_db


def upload(client, project, name: str, content: bytes, **form):  # type: ignore[no-untyped-def]
    data = {"file": SimpleUploadedFile(name, content), **form}
    return client.post(f"/api/projects/{project.slug}/examples/import/", data, format="multipart")


def jsonl(*rows: object) -> bytes:
    return "\n".join(json.dumps(row) for row in rows).encode()


def test_imdb_contrast_originals_import_with_mapping(shared_data, project, people, client_for):
    project.labels = ["Positive", "Negative"]
    project.save()
    path = shared_data / "imdb-contrast" / "test_original.tsv"
    response = upload(
        client_for(people["admin"]),
        project,
        path.name,
        path.read_bytes(),
        mapping=json.dumps({"text": "Text", "label": "Sentiment"}),
    )
    assert response.status_code == 201, response.json()
    assert response.json()["imported"] == 488
    with path.open(newline="") as handle:
        expected = list(csv.DictReader(handle, delimiter="\t"))
    stored = list(Example.objects.filter(project=project).order_by("id"))
    assert [e.fields["text"] for e in stored] == [row["Text"] for row in expected]
    assert [e.label for e in stored] == [row["Sentiment"] for row in expected]
    assert {e.split for e in stored} == {"test"}
    assert "<br /><br />" in stored[0].fields["text"]
    assert AuditLog.objects.filter(project=project, action="examples_imported").count() == 1


def test_two_field_jsonl_import_keeps_ids_splits_and_metadata(db, client_for, people):
    nli = ProjectFactory(
        slug="nli",
        fields=[
            {"name": "premise", "kind": "text", "editable": False},
            {"name": "hypothesis", "kind": "text", "editable": True},
        ],
        labels=["entailment", "neutral", "contradiction"],
    )
    from tests.factories import member

    admin = member(nli, "nadia", "admin")
    content = jsonl(
        {
            "id": "a1",
            "premise": "A dog runs.",
            "hypothesis": "An animal moves.",
            "label": "entailment",
            "split": "dev",
            "genre": "fiction",
        },
        {
            "id": 7,
            "premise": "A man sleeps.",
            "hypothesis": "A man runs.",
            "label": "contradiction",
        },
    )
    response = upload(client_for(admin), nli, "nli.jsonl", content)
    assert response.status_code == 201, response.json()
    first, second = Example.objects.filter(project=nli).order_by("id")
    assert first.external_id == "a1" and first.split == "dev"
    assert first.fields == {"premise": "A dog runs.", "hypothesis": "An animal moves."}
    assert first.metadata == {"genre": "fiction"}
    assert second.external_id == "7" and second.split == "test"


GOOD = {"id": "g", "text": "Fine.", "label": "positive"}


@pytest.mark.parametrize(
    ("name", "content", "line", "message"),
    [
        ("f.jsonl", jsonl(GOOD, {"id": "b", "label": "positive"}), 2, "missing field 'text'"),
        ("f.jsonl", jsonl(GOOD, {**GOOD, "id": "b", "label": "great"}), 2, "unknown label 'great'"),
        ("f.jsonl", jsonl(GOOD, GOOD), 2, "duplicate id 'g' (first seen on line 1)"),
        ("f.jsonl", jsonl(GOOD, {**GOOD, "id": "b", "text": "x" * 20_001}), 2, "20,001 characters"),
        (
            "f.jsonl",
            jsonl(GOOD) + b"\n" + '{"id": "b", "text": "caf\xe9"}'.encode("latin-1"),
            2,
            "bad encoding",
        ),
        ("f.jsonl", jsonl(GOOD) + b"\n{not json}", 2, "invalid JSON"),
        ("f.jsonl", jsonl(GOOD, [1, 2]), 2, "must be a JSON object"),
        ("f.jsonl", jsonl(GOOD, {**GOOD, "id": "b", "split": "holdout"}), 2, "unknown split"),
        ("f.jsonl", jsonl(GOOD, {**GOOD, "id": "b", "text": "  "}), 2, "field 'text' is empty"),
        ("f.jsonl", jsonl(GOOD, {**GOOD, "id": "b", "text": 3}), 2, "must be text"),
        ("f.csv", b"id,text,label\ng,Fine.,positive\nb,Bad.\n", 3, "expected 3 columns"),
        ("f.csv", b"id,body,label\ng,Fine.,positive\n", 1, "the header lacks 'text'"),
        ("f.tsv", b"id\ttext\tlabel\ng\tFine.\tpositive\nb\tOk.\tneutral\n", 3, "unknown label"),
        ("f.tsv", b"id\ttext\tlabel\n", None, "holds no rows"),
        (
            "f.csv",
            b'id,text,label\ng,"Fine.\nReally.",positive\nh,"Bad" x,negative\n',
            4,
            "malformed CSV",
        ),
    ],
    ids=[
        "missing field",
        "unknown label",
        "duplicate id",
        "field too long",
        "bad encoding",
        "invalid json",
        "not an object",
        "unknown split",
        "empty field",
        "non-text field",
        "short row",
        "missing column",
        "tsv unknown label",
        "no rows",
        "bad quoting",
    ],
)
def test_bad_input_is_rejected_with_its_line_and_nothing_is_imported(
    project, people, client_for, name, content, line, message
):
    response = upload(client_for(people["admin"]), project, name, content)
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert any(e["line"] == line and message in e["message"] for e in errors), errors
    assert not Example.objects.filter(project=project).exists()
    assert not ImportBatch.objects.filter(project=project).exists()


def test_id_already_in_project_rejects_the_whole_file(project, people, client_for):
    ExampleFactory(project=project, external_id="taken")
    content = jsonl({**GOOD, "id": "new"}, {**GOOD, "id": "taken"})
    response = upload(client_for(people["admin"]), project, "f.jsonl", content)
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"line": 2, "message": "id 'taken' already exists in this project."}
    ]
    assert list(project.examples.values_list("external_id", flat=True)) == ["taken"]


def test_upload_size_and_row_limits(project, people, client_for, settings):
    client = client_for(people["admin"])
    settings.IMPORT_MAX_BYTES = 100
    response = upload(
        client, project, "f.jsonl", jsonl(*[{**GOOD, "id": str(i)} for i in range(5)])
    )
    assert response.status_code == 400
    assert "upload limit" in response.json()["errors"][0]["message"]

    settings.IMPORT_MAX_BYTES = 10_000
    settings.IMPORT_MAX_ROWS = 3
    response = upload(
        client, project, "f.jsonl", jsonl(*[{**GOOD, "id": str(i)} for i in range(5)])
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"line": 4, "message": "more than 3 rows; that is the limit."}
    ]
    assert not project.examples.exists()


def test_many_bad_rows_are_all_counted_exactly_and_reported_up_to_a_cap(project):
    content = jsonl(*[{**GOOD, "id": str(i), "label": "nope"} for i in range(80)])
    with pytest.raises(ImportRejected) as rejected:
        import_examples(project=project, user=None, data=content, source_name="f.jsonl")
    # One message on eighty lines is reported once, naming its lines, with the exact count.
    (grouped,) = rejected.value.errors
    assert grouped.line == 1 and grouped.message.startswith("lines 1, 2, 3, 4, 5, 6, 7, 8, ...")
    assert "(80 lines): unknown label 'nope'" in grouped.message
    # Many different problems: fifty reported, the rest counted in one last entry.
    content = jsonl(*[{**GOOD, "id": str(i), "label": f"nope{i}"} for i in range(70)])
    with pytest.raises(ImportRejected) as rejected:
        import_examples(project=project, user=None, data=content, source_name="f.jsonl")
    errors = rejected.value.errors
    assert len(errors) == 51 and errors[49].line == 50
    last = (errors[50].line, errors[50].message)
    assert last == (None, "and 20 more (70 in all), on 20 more lines.")


def test_rows_without_ids_get_stable_ids_from_file_and_line(project):
    import_examples(
        project=project,
        user=None,
        data=b"text,label\nGood.,positive\nBad.,negative\n",
        source_name="reviews.csv",
        default_split="dev",
    )
    assert sorted(project.examples.values_list("external_id", "split")) == [
        ("reviews-2", "dev"),
        ("reviews-3", "dev"),
    ]


def test_management_command_imports_with_progress_bar(project, tmp_path, capsys):
    path = tmp_path / "orig.tsv"
    path.write_text("Sentiment\tText\npositive\tNice.\nnegative\tAwful.\n")
    call_command(
        "import_examples", project.slug, str(path), "--map", "text=Text", "--map", "label=Sentiment"
    )
    out = capsys.readouterr()
    assert json.loads(out.out)["imported"] == 2
    assert "saving" in out.err and "2/2" in out.err
    assert project.examples.count() == 2


def test_management_command_reports_lines_and_imports_nothing(project, tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("text,label\nNice.,positive\nAwful.,terrible\n")
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_examples", project.slug, str(path), "--no-progress")
    assert "bad.csv: line 3: unknown label 'terrible'" in capsys.readouterr().err
    assert not project.examples.exists()


def test_mapping_to_an_unknown_target_is_rejected(project, people, client_for):
    response = upload(
        client_for(people["admin"]),
        project,
        "f.csv",
        b"body,label\nx,positive\n",
        mapping=json.dumps({"body": "body"}),
    )
    assert response.status_code == 400
    assert "unknown targets body" in response.json()["errors"][0]["message"]


def test_format_is_taken_from_form_over_file_name(project, people, client_for):
    response = upload(
        client_for(people["admin"]),
        project,
        "data.txt",
        io.BytesIO(jsonl(GOOD)).getvalue(),
        format="jsonl",
    )
    assert response.status_code == 201


def test_a_json_array_document_is_read_object_by_object_with_lines(project, people, client_for):
    """A JSON array of objects (as many tools export) was refused as "line 1: invalid JSON"."""
    rows = [{"id": "a", "text": "A fine film.", "label": "positive"},
            {"id": "b", "text": "A dull film.", "label": "bogus"}]  # fmt: skip
    bad = "[\n  " + ",\n  ".join(json.dumps(r) for r in rows) + "\n]\n"
    answer = upload(client_for(people["admin"]), project, "rows.json", bad.encode())
    assert answer.status_code == 400
    assert [
        (e["line"], "unknown label 'bogus'" in e["message"]) for e in answer.json()["errors"]
    ] == [(3, True)]
    rows[1]["label"] = "negative"
    good = json.dumps(rows, indent=2).encode()
    answer = upload(client_for(people["admin"]), project, "rows.json", good)
    assert answer.status_code == 201, answer.json()
    assert dict(project.examples.values_list("external_id", "label")) == {
        "a": "positive", "b": "negative",
    }  # fmt: skip
    not_objects = upload(client_for(people["admin"]), project, "n.json", b'[{"id": "c"}, 3]')
    assert "element 2 of the array is not a JSON object" in str(not_objects.json())


def test_numbers_past_64_bits_are_kept_exactly_in_metadata(project):
    """orjson reads such an integer as a float and cannot write it: the strict reader and
    json.dumps keep it whole, as the ORM's insert did."""
    content = jsonl({**GOOD, "id": "big", "count": 18446744073709551616, "ratio": 1.5e20})
    import_examples(project=project, user=None, data=content, source_name="big.jsonl")
    metadata = Example.objects.get(project=project, external_id="big").metadata
    assert metadata == {"count": 18446744073709551616, "ratio": 1.5e20}
