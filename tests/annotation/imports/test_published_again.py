"""What an import page says after a published set is imported (issue 47's walk, "no page says
what is not so"): Quoref's repeated ids renamed <id>-2 are among the batch's stored warnings,
not only in the message; a second import of the same files adds nothing and its row says so,
with no undo of nothing."""

import csv
import io
import json

import pytest
from django.test import Client

from annotation.models import ImportBatch, Perturbation
from tests.annotation.imports.test_published_real import GARDNER, TABLE_2, files_of, real

pytestmark = pytest.mark.django_db


@pytest.fixture
def quoref(root):  # type: ignore[no-untyped-def]
    from annotation.imports.published.services import import_published

    return import_published(
        dataset="quoref", files=files_of(GARDNER, TABLE_2["quoref"][0]), user=root
    )


@pytest.fixture
def root(db, settings, tmp_path):  # type: ignore[no-untyped-def]
    from tests.factories import UserFactory

    settings.MEDIA_ROOT = tmp_path / "media"
    return UserFactory(username="root", is_staff=True, is_superuser=True)


def page_for(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def test_quorefs_renamed_ids_are_stored_with_the_warnings(root, quoref):
    published = json.loads((real(GARDNER) / TABLE_2["quoref"][0][1]).read_text())
    ids = [qa["id"] for a in published["data"] for p in a["paragraphs"] for qa in p["qas"]]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    batch = ImportBatch.objects.get(pk=quoref.batch)
    renamed = [w for w in batch.warnings if "names a second question" in w["message"]]
    assert sorted(w["id"] for w in renamed) == [f"{i}-2" for i in repeated]  # one a copy
    assert quoref.warning_count == len(batch.warnings)  # the count the message gives
    slug = quoref.project.slug
    page = page_for(root)
    listed = page.get(f"/p/{slug}/import/batches/{batch.pk}/warnings/").content.decode()
    assert all(f"kept as {i}-2" in listed for i in repeated)
    sheet = page.get(f"/p/{slug}/import/batches/{batch.pk}/warnings/?format=csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(sheet.streaming_content).decode())))
    assert sorted(r["id"] for r in rows if "names a second question" in r["message"]) == [
        f"{i}-2" for i in repeated
    ]
    assert len(rows) == len(batch.warnings) and all(r["id"] and r["line"] for r in rows)


def test_a_second_import_of_the_same_files_says_nothing_was_added(root, quoref):
    from annotation.imports.published.services import import_published

    again = import_published(dataset="quoref", files=files_of(GARDNER, TABLE_2["quoref"][0]),
                             user=root, project=quoref.project)  # fmt: skip
    assert again.created == 0 and again.already_present == 700
    assert Perturbation.objects.filter(batch_id=again.batch).count() == 0
    slug = quoref.project.slug
    page = page_for(root)
    html = page.get(f"/p/{slug}/import/").content.decode()
    first = html.split(f'data-batch="{quoref.batch}"')[1].split("</tr>")[0]
    second = html.split(f'data-batch="{again.batch}"')[1].split("</tr>")[0]
    assert "nothing added" in second and "Undo" not in second and "nothing to undo" in second
    assert "nothing added" not in first and "Undo…" in first
    # Its warnings counted, and linked (the count read without the warnings themselves)
    warned = len(ImportBatch.objects.get(pk=quoref.batch).warnings)
    assert warned and f'/import/batches/{quoref.batch}/warnings/">{warned}</a>' in first
    undo = page.get(f"/p/{slug}/import/batches/{again.batch}/undo/").content.decode()
    assert "removes nothing" in undo and "Nothing to undo</button>" in undo
    button = undo.split('id="confirm-removal"')[1].split(">")[0]
    assert "disabled" in button


def uploads(files):  # type: ignore[no-untyped-def]
    from django.core.files.uploadedfile import SimpleUploadedFile

    return {f"file{n}": SimpleUploadedFile(name, content)
            for n, (name, content) in enumerate(files, 1)}  # fmt: skip


def test_swapped_files_are_refused_at_the_top_in_one_line(root):
    """Quoref's two files in swapped order: one line says so (not a line per question), and
    it comes before the form, where the page opens, not 1,400 px below it."""
    names = TABLE_2["quoref"][0]
    files = files_of(GARDNER, names)[::-1]
    page = page_for(root)
    answer = page.post("/projects/new/published/", {"dataset": "quoref", **uploads(files)})
    html = answer.content.decode()
    assert answer.status_code == 400
    table = html.split('id="import-errors"')[1].split("</table>")[0]
    assert table.count("<tr>") == 2  # the header, and one problem
    assert "the files look swapped" in table and "Give the original subset first" in table
    assert html.index('id="import-errors"') < html.index('id="published-form"')


def test_a_slug_taken_links_to_its_project_and_names_the_slug_box(root):
    from tests.annotation.imports import published_files

    files, _ = published_files.ropes()
    page = page_for(root)
    made = page.post("/projects/new/published/", {"dataset": "ropes", **uploads(files)})
    assert made.status_code == 302
    again = page.post("/projects/new/published/", {"dataset": "ropes", **uploads(files)})
    html = again.content.decode()
    assert "type another slug in the Slug box" in html
    assert '<a href="/p/ropes/import/published/" id="taken-project">' in html
    slug_box = html.split('name="slug"')[1].split("</p>")[0]
    assert "exists" in slug_box  # the error beside the box it names


def test_the_warnings_page_names_each_place_once_and_the_import_row_no_empty_sha(root, quoref):
    """The walk: the warnings table repeated both file names on every row, and each place
    twice (Line, then the message); the Earlier imports row had an empty SHA-256 cell."""
    batch = ImportBatch.objects.get(pk=quoref.batch)
    slug = quoref.project.slug
    page = page_for(root)
    html = page.get(f"/p/{slug}/import/batches/{batch.pk}/warnings/").content.decode()
    assert "<th>File</th>" not in html
    rows = html.split('id="warning-rows">')[1].split("</tbody>")[0].split("<tr>")[1:]
    assert len(rows) == len(batch.warnings)
    for row, stored in zip(rows, batch.warnings, strict=True):
        place = str(stored["line"])
        assert row.count(place) == 1, row  # in the Line column only
    names = TABLE_2["quoref"][0]
    assert all(row.count(names[0]) == 0 for row in rows)  # the originals' file: not on a row
    listing = page.get(f"/p/{slug}/import/").content.decode()
    row = listing.split(f'data-batch="{batch.pk}"')[1].split("</tr>")[0]
    assert "<code></code>" not in row and "not kept (sets)" in row
