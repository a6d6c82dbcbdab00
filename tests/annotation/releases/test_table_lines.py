"""The release's files derived from Arrow columns (annotation.releases.table and .lines) against
the writers they replace: orjson for JSON, the cells module's tsv_line for TSV, and, on IMDb's
published contrast sets, the bundle written dict by dict."""

import io
import json
import zipfile
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from annotation.models import Release
from annotation.releases import copied, lines
from annotation.releases.table import Members, tsv_lines
from annotation.text.cells import tsv_line

# Every character orjson escapes, and some it leaves: DEL, U+2028, non-ASCII, the slash.
ALPHABET = st.sampled_from([*map(chr, range(32)), '"', "\\", "/", "\x7f", "\u2028", "é", "a", " "])
TEXT = st.text(alphabet=ALPHABET, max_size=12)


def written(lines_array: pa.Array) -> list[str]:
    return lines_array.to_pylist()


@hypothesis_settings(deadline=None)  # the first call imports Arrow's kernels
@given(st.lists(st.none() | TEXT, max_size=20))
def test_strings_are_what_orjson_writes(values):
    column = pa.array(values, pa.string())
    expected = [orjson.dumps(v).decode() for v in values]
    assert written(lines.strings(column)) == expected
    assert written(lines.few_strings(column)) == expected


@hypothesis_settings(deadline=None)  # the first call imports Arrow's kernels
@given(st.lists(st.none() | st.floats(allow_nan=False, allow_infinity=False), max_size=20))
def test_floats_are_what_orjson_writes(values):
    column = pa.array(values, pa.float64())
    assert written(lines.numbers(column)) == [orjson.dumps(v).decode() for v in values]


@hypothesis_settings(deadline=None)  # the first call imports Arrow's kernels
@given(st.lists(st.lists(TEXT, max_size=3), max_size=8))
def test_lists_of_strings_and_objects_are_what_orjson_writes(values):
    column = pa.array(values, pa.list_(pa.string()))
    listed = lines.string_lists(column)
    assert written(listed) == [orjson.dumps(v).decode() for v in values]
    joined = lines.objects([("tags", listed), ("role", '"perturbed"')])
    assert written(joined) == [
        orjson.dumps({"tags": v, "role": "perturbed"}).decode() for v in values
    ]
    text = bytes(lines.buffer(joined)).decode()
    assert text == "".join(line + "\n" for line in written(joined))


@hypothesis_settings(deadline=None)  # the first call imports Arrow's kernels
@given(st.lists(st.tuples(TEXT, TEXT), max_size=10))
def test_tsv_lines_are_the_cells_modules_rows(rows):
    columns = [pa.array([row[k] for row in rows], pa.string()) for k in (0, 1)]
    assert tsv_lines(columns).decode() == "".join(tsv_line(row) for row in rows)


def test_a_chunk_whose_fields_differ_is_not_derived_from_columns():
    def record(fields):  # type: ignore[no-untyped-def]
        original = {"id": "o", "fields": fields, "label": "positive"}
        return {"set_id": "o", "split": "test", "original": original, "perturbations": []}

    assert Members([record({"text": "a"})], ["text"], False).plain
    assert not Members([record({"text": "a"}), record({})], ["text"], False).plain
    assert not Members([record({"id": "a"})], ["id"], False).plain  # a field named as a key


@pytest.mark.django_db
def test_imdb_files_from_columns_are_those_written_dict_by_dict(
    shared_data, project, people, client_for, settings, tmp_path, monkeypatch
):
    """IMDb's reviews (quotes, backslashes, <br />, formula-like starts): every data file of
    the release is the same, byte for byte, as the bundle writes it set by set."""
    settings.MEDIA_ROOT = tmp_path / "media"
    project.labels = ["Positive", "Negative"]
    project.save()
    admin = client_for(people["admin"])
    folder = shared_data / "imdb-contrast"
    answer = admin.post(f"/api/projects/{project.slug}/import/sets/", {
        "format": "paired_tsv", "mapping": json.dumps({"text": "Text", "label": "Sentiment"}),
        "accept": "true", "author": "gardner2020", "tags": "negation",
        **{name: SimpleUploadedFile(f"test_{name}.tsv",
                                    (folder / f"test_{name}.tsv").read_bytes())
           for name in ("original", "contrast")},
    }, format="multipart")  # fmt: skip
    assert answer.status_code == 201, answer.json()

    def bundle(version: str) -> zipfile.ZipFile:
        response = admin.post(f"/api/projects/{project.slug}/releases/", {"version": version})
        assert response.status_code == 201, response.json()
        release = Release.objects.get(pk=response.json()["id"])
        return zipfile.ZipFile(Path(settings.MEDIA_ROOT) / release.bundle)

    columns = bundle("columns")
    monkeypatch.setattr(Members, "plain", property(lambda self: False))
    monkeypatch.setattr(copied, "applies", lambda project: False)  # read from rows
    dicts = bundle("dicts")
    names = set(columns.namelist())
    assert names == set(dicts.namelist())
    data = {n for n in names if n.endswith((".jsonl", ".tsv"))}
    assert {"sets.jsonl", "examples.jsonl", "paired/test_original.tsv"} <= data
    for name in data:
        assert columns.read(name) == dicts.read(name), name
    # The Parquet rows are the JSON lines' (votes as a list of responses and counts).
    rows = [json.loads(line) for line in columns.read("examples.jsonl").splitlines()]
    for row in rows:
        row["votes"] = [{"response": k, "count": n} for k, n in row["votes"].items()]
    parquet = pq.read_table(io.BytesIO(columns.read("data/examples/test.parquet")))
    assert parquet.to_pylist() == rows and len(rows) == 976
    sets = [json.loads(line) for line in columns.read("sets.jsonl").splitlines()]
    parquet = pq.read_table(io.BytesIO(columns.read("data/sets/test.parquet"))).to_pylist()
    assert [(s["set_id"], s["original"]) for s in sets] == [
        (s["set_id"], s["original"]) for s in parquet
    ]
    assert [len(s["perturbations"]) for s in sets] == [len(s["perturbations"]) for s in parquet]


def test_a_chunk_of_sets_of_one_gives_the_lines_orjson_writes(tmp_path):
    """Originals released alone (no perturbation), in a chunk of their own and beside a set."""
    from annotation.models import Project
    from annotation.releases.table import TableViews

    project = Project(slug="x", task_type="classification", labels=["positive", "negative"],
                      fields=[{"name": "text", "kind": "text", "editable": True}])  # fmt: skip

    class Ignored:  # the paired TSVs and lm_eval docs, which the other tests read
        def write(self, data):  # type: ignore[no-untyped-def]
            pass

    class Written:
        def __init__(self):  # type: ignore[no-untyped-def]
            self.data = b""

        def write(self, data):  # type: ignore[no-untyped-def]
            self.data += bytes(data)

    def alone(n):  # type: ignore[no-untyped-def]
        original = {"id": f"o{n}", "fields": {"text": f'say "{n}"'}, "label": "positive"}
        return {"set_id": f"o{n}", "split": "test", "original": original, "perturbations": []}

    perturbation = {"id": "p-1", "fields": {"text": "no"}, "label": "negative",
                    "label_changed": True, "tags": ["negation"], "rationale": "", "author": "e-1",
                    "votes": {"negative": 5}, "agreement": 1.0, "edit_distance": 0.5,
                    "seconds_spent": 3, "guideline_version": 1}  # fmt: skip
    with_one = {**alone(2), "perturbations": [perturbation]}
    for n, records in enumerate(([alone(1)], [alone(1), with_one, alone(3)])):
        sets, examples_file = Written(), Written()
        lines = (sets, examples_file)
        (tmp_path / str(n)).mkdir()
        views = TableViews(project, tmp_path / str(n), lambda name: Ignored(), lines, [])  # type: ignore[arg-type]
        views.add(Members(records, ["text"], False))
        views.wait()
        assert sets.data == b"".join(orjson.dumps(r) + b"\n" for r in records)
        examples = []
        for r in records:
            o = r["original"]
            examples.append({"id": o["id"], "set_id": r["set_id"], "role": "original",
                             "split": "test", "text": o["fields"]["text"], "label": o["label"],
                             "label_changed": None, "tags": [], "votes": {}})  # fmt: skip
            examples += [{"id": p["id"], "set_id": r["set_id"], "role": "perturbed",
                          "split": "test", "text": p["fields"]["text"], "label": p["label"],
                          "label_changed": True, "tags": p["tags"], "votes": p["votes"]}
                         for p in r["perturbations"]]  # fmt: skip
        assert examples_file.data == b"".join(orjson.dumps(e) + b"\n" for e in examples)
        views.close()
