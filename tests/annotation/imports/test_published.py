"""Gardner et al.'s published contrast sets in one step: each format into a fresh project made
from its template, paired as the dataset's own script pairs them, with every published id in
the release; kept as published (repeats, read-only edits, answers SQuAD's rules empty) with
warnings; bad files refused whole with the problem and where it is."""

import io
import json
import re
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.errors import DomainError, ImportRejected
from annotation.imports.published.datasets import DATASETS
from annotation.imports.published.services import import_published
from annotation.models import Example, Perturbation, Project, Release
from tests.annotation.imports import published_files
from tests.annotation.imports.test_published_real import IMDB, real
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(db, settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"
    return UserFactory(username="root", is_staff=True, is_superuser=True)


def release_examples(client_for, root, slug: str) -> list[dict]:  # type: ignore[no-untyped-def]
    """The examples.jsonl of a first release of the project."""
    api = client_for(root)
    made = api.post(f"/api/projects/{slug}/releases/", {"version": "1"}, format="json")
    assert made.status_code == 201, made.json()
    release = Release.objects.get(pk=made.json()["id"])
    from django.conf import settings

    with zipfile.ZipFile(Path(settings.MEDIA_ROOT) / release.bundle) as bundle:
        return [json.loads(line) for line in bundle.read("examples.jsonl").splitlines()]


@pytest.mark.parametrize("dataset", sorted(DATASETS))
def test_each_format_imports_in_one_step_with_its_ids_released(dataset, root, client_for):
    files, expected = published_files.BUILDERS[dataset]()
    result = import_published(dataset=dataset, files=files, user=root)
    project = result.project
    assert result.project_created and project.slug == dataset
    assert project.field_names == [f["name"] for f in DATASETS[dataset].fields]
    perturbations = sum(len(ids) for ids in expected.values())
    assert result.counts == {"test": (len(expected), perturbations)}
    assert result.created == perturbations
    assert Perturbation.objects.filter(project=project, status="accepted").count() == perturbations
    examples = release_examples(client_for, root, dataset)
    released = {(e["set_id"], e["role"], e["id"]) for e in examples}
    wanted = {(o, "original", o) for o in expected}
    wanted |= {(o, "perturbed", p) for o, ids in expected.items() for p in ids}
    assert released == wanted  # every published id, in its set, with its role
    # Importing the same files again adds nothing.
    again = import_published(dataset=dataset, files=files, user=root, project=project)
    assert (again.created, again.already_present) == (0, perturbations)


def test_the_real_imdb_files_give_the_papers_counts(root):
    data = real(IMDB)
    names = ["test_original.tsv", "test_contrast.tsv", "dev_original.tsv", "dev_contrast.tsv"]
    result = import_published(
        dataset="imdb", files=[(n, (data / n).read_bytes()) for n in names], user=root
    )
    assert result.counts == {"test": (488, 488), "dev": (100, 100)}
    assert result.test_counts == (488, 488) and result.matches_paper
    assert result.summary() == (
        "IMDb: test: 488 sets, 488 perturbations; dev: 100 sets, 100 perturbations. The paper's "
        "Table 2: 488 sets, 488 perturbations: the same. 588 perturbations added, 0 already here."
    )


def test_a_repeated_boolq_perturbation_is_kept_with_a_warning_naming_both(root, client_for):
    files, _ = published_files.boolq()
    result = import_published(dataset="boolq", files=files, user=root)
    repeats = [w.message for w in result.warnings if "repeats" in w.message]
    assert repeats == [
        "data[1].perturbed_questions[2] repeats data[1].perturbed_questions[1]; both are kept."
    ]
    assert any("not a question, its answer neither true nor false (at data[0])" in note
               for note in result.notes)  # fmt: skip
    assert any("1 row(s) left out, a perturbation left empty in the file (at data[" in note
               for note in result.notes)  # fmt: skip
    texts = [e["question"] for e in release_examples(client_for, root, "boolq")]
    assert texts.count("does a P.O. box contain the street address") == 2


def test_ropes_answers_a_and_b_and_a_read_only_edit_are_kept(root, client_for):
    files, _ = published_files.ropes()
    result = import_published(dataset="ropes", files=files, user=root)
    # ROPES's rules keep "A": nothing to warn about the answers. The one warning names the
    # perturbation by its id and the line of its "id" in the file (laid out over lines).
    text = files[1][1].decode().splitlines()
    line = next(n for n, said in enumerate(text, 1) if '"id": "333"' in said)
    assert [(w.count, w.message, w.places) for w in result.warnings] == [
        (
            1,
            f"ropes_contrast_set_032820.json line {line}: the edit changes the read-only field "
            "'background', kept as published.",
            [f"333 (line {line})"],
        )
    ]
    project = result.project
    assert project.setting("answer_normalization") == "ropes"
    assert project.setting("answer_consistency") == "em"
    by_key = {(e["id"], e["role"]): e for e in release_examples(client_for, root, "ropes")}
    assert by_key["111", "original"]["answers"] == ["A"]
    assert by_key["111", "perturbed"]["answers"] == ["B"]  # one id, told apart by role
    assert by_key["333", "perturbed"]["background"] == "Warming up lowers the heart rate."


def test_multi_span_answers_stay_one_answer_of_several_spans(root, client_for):
    files, _ = published_files.quoref()
    result = import_published(dataset="quoref", files=files, user=root)
    assert any("changes the read-only field 'context'" in w.message for w in result.warnings)
    by_key = {(e["id"], e["role"]): e for e in release_examples(client_for, root, "quoref")}
    assert by_key["q1", "original"]["answers"] == [["Traci", "Gibson"]]
    files, _ = published_files.drop()
    import_published(dataset="drop", files=files, user=root)
    by_key = {(e["id"], e["role"]): e for e in release_examples(client_for, root, "drop")}
    assert by_key["aaa", "original"]["answers"] == ["26", "26 warships"]  # validated too
    assert by_key["bbb", "original"]["answers"] == [["warships", "soldiers"]]
    assert by_key["aaa_2", "perturbed"]["answers"] == ["1565"]  # the date, and its alternative
    assert "ccc" not in {e["id"] for e in by_key.values()}  # only perturbed originals


def test_matres_keeps_its_html_and_tags_its_reasons(root):
    files, _ = published_files.matres()
    result = import_published(dataset="matres", files=files, user=root)
    project = result.project
    assert project.fields[0]["kind"] == "html"
    assert sorted(project.tags.values_list("name", flat=True)) == [
        "appearance order", "gardner-2020", "tense"]  # fmt: skip
    labels = sorted(Perturbation.objects.filter(project=project).values_list("label", flat=True))
    assert labels == ["before", "simultaneous", "vague"]  # "equal" is MATRES's simultaneous
    browser = Client()
    browser.force_login(root)
    pivots = browser.get("/p/matres/pivots/").content.decode()
    assert "He said it rained ." in pivots and "&lt;span" not in pivots  # excerpts as text


@pytest.mark.parametrize(
    ("dataset", "files", "problem"),
    [
        ("ropes", lambda: published_files.ropes()[0][:1], "comes in 2 file(s)"),
        ("quoref", lambda: published_files.quoref()[0][::-1],
         "the files look swapped: "),
        ("mctaco", lambda: [("original.tsv", b"index\tsentence1\tsentence2\tlabel\n0\ta\tb\tyes\n"),
                            ("changed.tsv", b"index\tsentence1\tsentence2\tlabel\n7\ta\tc\tno\n"
                                            b"8\td\tc\tno\n")],
         "changed.tsv: 2 questions for 1 in original.tsv"),
        ("imdb", lambda: [("test_original.tsv", b"Sentiment\tText\nPositive\tGood.\n"),
                          ("test_contrast.tsv", b"Sentiment\tText\nMeh\tBad.\n")],
         "test_contrast.tsv line 2: unknown label 'Meh'"),
        ("boolq", lambda: [("boolq_perturbed.json", b"{not json")], "not a JSON document"),
    ],
)  # fmt: skip
def test_a_bad_file_is_refused_whole_with_where_and_what(dataset, files, problem, root):
    with pytest.raises(ImportRejected) as rejected:
        import_published(dataset=dataset, files=files(), user=root)
    assert any(problem in e.message for e in rejected.value.errors), rejected.value.errors
    assert not Project.objects.filter(slug=dataset).exists()  # nothing was created


def test_a_project_that_does_not_fit_is_refused(root, project):
    files, _ = published_files.imdb()
    with pytest.raises(DomainError, match="IMDb needs a classification project with the fields"):
        import_published(dataset="imdb", files=files, user=root, project=project_with_two_fields())


def project_with_two_fields() -> Project:
    from annotation.projects.services import project_create

    return project_create(user=None, name="Two", slug="two", labels=["a", "b"], fields=[
        {"name": "text", "editable": True}, {"name": "other", "editable": False}])  # fmt: skip


def test_the_command_creates_the_project_and_reports_the_papers_counts(root, tmp_path):
    files, _ = published_files.nlvr2()
    paths = []
    for name, content in files:
        (tmp_path / name).write_bytes(content)
        paths.append(str(tmp_path / name))
    out = io.StringIO()
    call_command("import_published", "nlvr2", *paths, "--project", "vision", stdout=out)
    said = out.getvalue()
    assert "Created project vision." in said
    assert (
        "The paper's Table 2: 479 sets, 994 examples (originals included); here on test: 2 sets, 5."
        in said
    )
    assert "The counts differ from the paper's" in said  # a small file, not the published one
    with pytest.raises(CommandError, match="Nothing was imported"):
        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"sentence": "x"}\n')
        call_command("import_published", "nlvr2", str(bad), "--project", "other",
                     "--name", "Other", stdout=out)  # fmt: skip


def test_the_new_project_page_imports_a_published_set_in_one_step(root):
    browser = Client()
    browser.force_login(root)
    assert "a published contrast set" in browser.get("/projects/new/").content.decode()
    page = browser.get("/projects/new/published/")
    assert page.status_code == 200 and "perspectrum_contrast_sets.csv" in page.content.decode()
    files, _ = published_files.perspectrum()
    name, content = files[0]
    upload = SimpleUploadedFile(name, content)
    answer = browser.post(
        "/projects/new/published/", {"dataset": "perspectrum", "slug": "stance", "file1": upload}
    )
    assert answer.status_code == 302 and answer["Location"] == "/p/stance/"
    said = [str(m) for m in answer.wsgi_request._messages]
    assert said[0].startswith("PERSPECTRUM: test: 3 sets, 3 perturbations. The paper's Table 2")
    assert (
        "1 row(s) left out, whose original stance is 'unk' (at 3): see Skipped in Earlier imports."
        in said
    )
    assert "1 row(s) of the files left out." in said[0]
    assert (
        "1 stance(s) neither 'pos' nor 'neg': read as 'neg', as run_evaluation.py reads them."
        in said
    )
    contrast = Perturbation.objects.get(
        project__slug="stance", external_id="perspectrum-5-contrast"
    )
    assert contrast.label == "neg"
    # Into the project it made, from its own Import page: the dataset is chosen already.
    page = browser.get("/p/stance/import/published/").content.decode()
    assert '<option value="perspectrum" selected>' in page
    refused = browser.post("/p/stance/import/published/", {
        "dataset": "perspectrum",
        "file1": SimpleUploadedFile(name, b"original_claim\nx\n")})  # fmt: skip
    assert refused.status_code == 400 and "the header lacks" in refused.content.decode()


def test_only_creators_may_make_a_project_from_a_published_set(db, client_for):
    browser = Client()
    browser.force_login(UserFactory(username="plain"))
    assert browser.get("/projects/new/published/").status_code == 403


def test_the_api_imports_a_published_set_and_refuses_who_may_not(root, client_for, project):
    files, _ = published_files.ropes()

    def body(**more):  # type: ignore[no-untyped-def]
        uploads = {f"file{n}": SimpleUploadedFile(name, content)
                   for n, (name, content) in enumerate(files, 1)}  # fmt: skip
        return {"dataset": "ropes", **uploads, **more}

    plain = client_for(UserFactory(username="plain"))
    assert plain.post("/api/import/published/", body(slug="qa")).status_code == 403
    answer = client_for(root).post("/api/import/published/", body(slug="qa"))
    assert answer.status_code == 201, answer.json()
    said = answer.json()
    assert said["project"] == "qa" and said["project_created"]
    assert said["test"] == {"sets": 2, "examples": 2}
    assert said["paper"] == {"sets": 974, "examples": 974} and not said["matches_paper"]
    assert said["perturbations"] == 2
    messages = [w["message"] for w in said["warnings"]]
    assert any("changes the read-only field 'background', kept as published" in m for m in messages)
    again = client_for(root).post("/api/projects/qa/import/published/", body())
    assert again.status_code == 200 and again.json()["already_present"] == 2
    taken = client_for(root).post("/api/import/published/", body(slug="qa"))
    assert taken.status_code == 400 and "'qa' exists: import into it" in taken.json()["detail"]
    assert taken.json()["field"] == "slug"
    # An existing project's slug: only its admins; the others as if it did not exist.
    assert plain.post(f"/api/projects/{project.slug}/import/published/", body()).status_code == 404
    refused = client_for(root).post(f"/api/projects/{project.slug}/import/published/", body())
    assert refused.status_code == 400
    assert "ROPES needs a free-text project" in refused.json()["detail"]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "A", "FALSE", "x_1"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["data", "paragraphs", "qas", "question", "id", "answers",
                                       "text", "original_id", "qa_pairs", "passage", "answer",
                                       "query_id", "perturbed_questions", "perturbed_q",
                                       "context", "spans", "number", "date"]), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip


ODD_SHAPES = [
    ("quoref", [{"data": [[1]]}, {"data": []}]),
    ("quoref", [{"data": [{"paragraphs": [5]}]}, {"data": []}]),
    ("quoref", [{"data": [{"paragraphs": [{"qas": [3]}]}]}, {"data": []}]),
    ("quoref", [{"data": [{"paragraphs": [{"qas": [{"id": 1}]}]}]},
                {"data": [{"paragraphs": [{"qas": [{"id": 2, "original_id": 1}]}]}]}]),
    ("ropes", [{"data": [{"paragraphs": [{"qas": [{"id": 1, "answers": [1]}]}]}]},
               {"data": [{"paragraphs": [{"qas": [7]}]}]}]),
    ("drop", [{"p": [1]}, {"p": {"qa_pairs": [1]}}]),
    ("drop", [{"p": {"qa_pairs": [{"query_id": "a"}]}},
              {"p": {"qa_pairs": [{"query_id": "a_1", "answer": {"spans": "xy", "date": [1]}}]}}]),
    ("boolq", [{"data": [{"perturbed_questions": [{"perturbed_q": ["x"], "answer": None}],
                          "answer": "TRUE"}]}]),
    ("nlvr2", [{"sentence": None, "left_url": 1, "right_url": [], "identifier": 5, "label": 0}]),
]  # fmt: skip


@pytest.mark.parametrize(("dataset", "documents"), ODD_SHAPES)
def test_files_of_odd_shapes_are_refused_with_where(dataset, documents, root):
    files = [(f"f{n}.json", json.dumps(d).encode()) for n, d in enumerate(documents)]
    with pytest.raises(ImportRejected) as rejected:
        import_published(dataset=dataset, files=files, user=root)
    # Each problem says where it is (docs/published/README.md): the file, a path in its JSON,
    # or the published id, before what is wrong there.
    where = re.compile(r"^(f\d\.json\b|data\[\d+\]|set '[^']+': )")
    assert [e.message for e in rejected.value.errors if not where.match(e.message)] == []


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(dataset=st.sampled_from(sorted(DATASETS)), documents=st.lists(JSON, min_size=1, max_size=2))
def test_any_file_is_imported_or_refused_with_a_reason_never_a_crash(root, dataset, documents):
    """Whatever the files hold, the import is whole, or refused with its problems (a 400) and
    nothing half-imported; never another exception (a 500)."""
    files = [(f"f{n}.json", json.dumps(d).encode()) for n, d in enumerate(documents)]
    slug = f"fuzz-{dataset}"
    project = Project.objects.filter(slug=slug).first()
    counts = (Project.objects.count, Example.objects.count, Perturbation.objects.count)
    before = [count() for count in counts]
    try:
        result = import_published(dataset=dataset, files=files, user=root, project=project,
                                  slug=slug)  # fmt: skip
    except ImportRejected as rejected:
        assert rejected.errors and all(e.message.strip() for e in rejected.errors)
        assert all(e.line is None or e.line >= 1 for e in rejected.errors)
        assert [count() for count in counts] == before
    except DomainError as refused:
        assert refused.message.strip() and [count() for count in counts] == before
    else:
        assert result.project.slug == slug
        assert Perturbation.objects.count() == before[2] + result.created


def test_warnings_show_once_on_the_projects_own_page_after_the_import(root):
    browser = Client()
    browser.force_login(root)
    files, _ = published_files.ropes()
    uploads = {f"file{n}": SimpleUploadedFile(name, content)
               for n, (name, content) in enumerate(files, 1)}  # fmt: skip
    answer = browser.post("/projects/new/published/", {"dataset": "ropes", **uploads})
    assert answer.status_code == 302 and answer["Location"] == "/p/ropes/import/published/"
    page = browser.get(answer["Location"]).content.decode()
    assert "Imported, with 1 warning" in page and "changes the read-only field" in page
    assert 'aria-current="page">Import</a>' in page  # the project's tabs, Import current
    assert "Imported, with" not in browser.get(answer["Location"]).content.decode()


def test_the_published_import_tells_no_one_which_slugs_exist(root, client_for, project):
    """The route into a project made a new one of a free slug: someone who may not create
    projects got 404 for a slug that exists and 403 for one that does not. Now both are 404;
    the new project has its own route, and the old one sends creators there (308)."""
    files, _ = published_files.ropes()

    def body(**more):  # type: ignore[no-untyped-def]
        uploads = {f"file{n}": SimpleUploadedFile(name, content)
                   for n, (name, content) in enumerate(files, 1)}  # fmt: skip
        return {"dataset": "ropes", **uploads, **more}

    plain = client_for(UserFactory(username="plain"))
    existing = plain.post(f"/api/projects/{project.slug}/import/published/", body())
    missing = plain.post("/api/projects/no-such-project/import/published/", body())
    assert existing.status_code == missing.status_code == 404
    assert existing.json() == missing.json()
    creator = client_for(root)
    moved = creator.post("/api/projects/qa/import/published/", body())
    assert moved.status_code == 308 and not Project.objects.filter(slug="qa").exists()
    assert moved["Location"] == moved.json()["location"] == "/api/import/published/?slug=qa"
    made = creator.post(moved["Location"], body())  # what a client following it sends
    assert made.status_code == 201 and made.json()["project"] == "qa"
    bad = creator.post("/api/import/published/?slug=Not%20a%20slug", body())
    assert bad.status_code == 400 and "slug" in bad.json()
