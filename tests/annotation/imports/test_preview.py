"""The Import page's preview: a staged upload is its uploader's, for its project; the preview
reads the file as the import will; any choices posted give a clear answer, never a 5xx."""

import os
import re
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.imports.preview import guess
from annotation.models import Example
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db
CSV = b"Review,Sentiment,split\nA fine film.,Pos,dev\nA dull film.,Neg,test\n"


def staged(page: Client, slug: str, content: bytes = CSV, name: str = "r.csv") -> str:
    shown = page.post(f"/p/{slug}/import/", {"file": SimpleUploadedFile(name, content),
                                              "split": "test"})  # fmt: skip
    assert shown.status_code == 200, shown.content.decode()[:2000]
    found = re.search(r'name="upload" value="(\w+)"', shown.content.decode())
    assert found is not None
    return found.group(1)


def test_the_preview_guesses_columns_and_commits_with_the_choices(project, people):
    assert guess(project, ["Review", "Sentiment", "ID"]) == {
        "text": "Review", "label": "Sentiment", "id": "ID", "split": ""
    }  # fmt: skip
    page = Client()
    page.force_login(people["admin"])
    token = staged(page, project.slug)
    choices = {"upload": token, "split": "test", "map_text": "Review", "map_label": "Sentiment",
               "map_split": "split", "value_1": "Pos", "label_1": "positive", "value_2": "Neg",
               "label_2": "negative"}  # fmt: skip
    again = page.post(f"/p/{project.slug}/import/", {**choices, "action": "preview"})
    html = again.content.decode()
    assert "<td>A fine film.</td><td>positive</td><td>dev</td>" in html
    assert not Example.objects.exists()
    done = page.post(f"/p/{project.slug}/import/", {**choices, "action": "import"}, follow=True)
    assert "Imported 2 examples from r.csv." in done.content.decode()
    assert sorted(Example.objects.values_list("label", "split")) == [
        ("negative", "test"), ("positive", "dev")
    ]  # fmt: skip
    gone = page.post(f"/p/{project.slug}/import/", {**choices, "action": "import"})
    assert "That upload is gone" in gone.content.decode()  # committed once, then removed
    assert Example.objects.count() == 2


def test_a_staged_upload_is_only_its_uploaders_for_its_project(project, people):
    page = Client()
    page.force_login(people["admin"])
    token = staged(page, project.slug)
    other_admin = member(project, "ada", "admin")
    thief = Client()
    thief.force_login(other_admin)
    answer = thief.post(f"/p/{project.slug}/import/", {"upload": token, "split": "test",
                                                       "action": "import"})  # fmt: skip
    assert "That upload is gone" in answer.content.decode()
    elsewhere = ProjectFactory(slug="elsewhere-2")
    member(elsewhere, people["admin"].username, "admin")
    moved = page.post(f"/p/{elsewhere.slug}/import/", {"upload": token, "split": "test"})
    assert "That upload is gone" in moved.content.decode()
    for bad in ("../../etc", "x" * 32, "0" * 31):
        assert (
            "That upload is gone"
            in page.post(
                f"/p/{project.slug}/import/", {"upload": bad, "split": "test"}
            ).content.decode()
        )
    assert not Example.objects.exists()


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(
    st.sampled_from(["map_text", "map_label", "map_id", "map_split", "value_1", "label_1",
                     "format", "split", "action"]),
    st.one_of(st.text(max_size=12), st.sampled_from(["Review", "Sentiment", "import", "jsonl"])),
))  # fmt: skip
def test_fuzzed_preview_choices_never_give_a_5xx(project, people, choices):
    page = Client()
    page.force_login(people["admin"])
    token = staged(page, project.slug)
    answer = page.post(f"/p/{project.slug}/import/", {"upload": token, "split": "test", **choices})
    assert answer.status_code < 500


def test_skipping_bad_lines_imports_the_good_ones_and_keeps_the_bad_to_download(project, people):
    """The default stays atomic; asked, the good rows go in and the bad lines, with their
    problems and text, download from the batch; ids already here are skipped too."""
    import csv
    import io

    page = Client()
    page.force_login(people["admin"])
    content = b"id,text,label\na,Fine.,positive\nb,Dull.,boring\nc,,negative\nd,Good.,positive\n"
    choices = {"split": "test", "map_text": "text", "map_label": "label", "map_id": "id"}
    token = staged(page, project.slug, content)
    atomic = page.post(f"/p/{project.slug}/import/", {"upload": token, **choices,
                                                      "action": "import"})  # fmt: skip
    assert atomic.status_code == 400 and not Example.objects.exists()
    done = page.post(f"/p/{project.slug}/import/", {"upload": token, **choices,
                                                    "skip_bad": "on", "action": "import"},
                     follow=True)  # fmt: skip
    assert "Imported 2 examples from r.csv. 2 bad lines were skipped" in done.content.decode()
    assert sorted(Example.objects.values_list("external_id", flat=True)) == ["a", "d"]
    from annotation.models import ImportBatch

    batch = ImportBatch.objects.get(project=project)
    table = page.get(f"/p/{project.slug}/import/batches/{batch.pk}/skipped/")
    rows = list(csv.DictReader(io.StringIO(b"".join(table.streaming_content).decode())))
    assert [(r["line"], r["text"]) for r in rows] == [("3", "b,Dull.,boring"), ("4", "c,,negative")]
    assert "unknown label 'boring'" in rows[0]["message"] and "empty" in rows[1]["message"]
    token = staged(page, project.slug, content)  # again: a, d are here now
    skip = {"upload": token, **choices, "skip_bad": "on", "action": "import"}
    again = page.post(f"/p/{project.slug}/import/", skip)
    assert again.status_code == 400 and "no row can be imported" in again.content.decode()


def test_parts_of_uploads_cut_off_by_a_killed_web_process_are_swept_after_a_day(
    project, people, tmp_path, settings
):  # type: ignore[no-untyped-def]
    """A gunicorn worker killed mid-upload left Django's temporary file of the part received
    (3.9 MB in the job drill) in /tmp, for good."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.FILE_UPLOAD_TEMP_DIR = tmp_path / "uploading"
    settings.FILE_UPLOAD_TEMP_DIR.mkdir()
    old, fresh = (settings.FILE_UPLOAD_TEMP_DIR / name for name in ("old.upload", "new.upload"))
    for part in (old, fresh):
        part.write_bytes(b"half a file")
    a_day_ago = time.time() - 25 * 3600
    os.utime(old, (a_day_ago, a_day_ago))
    page = Client()
    page.force_login(people["admin"])
    staged(page, project.slug)
    assert not old.exists() and fresh.exists()
