"""Large imports run on a real worker (IMPORT_BACKGROUND_BYTES): the request answers at once
with the job, and the import is as atomic, and its errors as line-numbered, as in a request."""

import json
import re
from pathlib import Path

import pytest
import redis
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client

from annotation.models import Example, ImportJob, ValidationItem
from tests.workers import BROKER, start_worker, stop, wait_for, worker_env

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def worker(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.IMPORT_BACKGROUND_BYTES = 10  # every upload of these tests is "large"
    settings.MEDIA_ROOT = tmp_path / "media"
    redis.Redis.from_url(BROKER).flushdb()
    db = connection.settings_dict
    env = worker_env(
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        CELERY_BROKER_URL=BROKER, MEDIA_ROOT=str(settings.MEDIA_ROOT),
        CONTRASTLAB_VAR_DIR=str(tmp_path / "var"),
    )  # fmt: skip
    process = start_worker(env, tmp_path / "worker.log")
    yield process
    stop(process)


def finished(client, url: str) -> dict:  # type: ignore[no-untyped-def]
    answer: dict = {}

    def done() -> bool:
        answer.update(client.get(url).json())
        return answer["status"] in ("succeeded", "failed")

    wait_for(done, 60, "the import job to finish")
    return answer


def vote_lines(lines: list) -> SimpleUploadedFile:  # type: ignore[type-arg]
    return SimpleUploadedFile("votes.jsonl", "\n".join(json.dumps(x) for x in lines).encode())


def test_a_large_vote_import_is_queued_and_a_worker_imports_it(
    project, people, client_for, worker, settings
):
    admin = client_for(people["admin"])
    lines = [
        {"id": f"x{n}", "fields": {"text": f"Text {n}."},
         "label_distribution": {"positive": ["w1", "w2"], "negative": ["w3"]}}
        for n in range(3)
    ]  # fmt: skip
    url = f"/api/projects/{project.slug}/import/votes/"
    queued = admin.post(url, {"file": vote_lines(lines)}, format="multipart")
    assert queued.status_code == 202 and queued.json()["status"] == "queued"
    job = queued.json()["job"]
    answer = finished(admin, f"/api/projects/{project.slug}/imports/{job}/")
    assert answer["status"] == "succeeded", answer
    assert answer["result"] == {"imported": 3, "already_present": 0} and answer["errors"] == []
    assert ValidationItem.objects.filter(project=project).count() == 3
    stored = ImportJob.objects.get(pk=job).files
    assert stored and not any((Path(settings.MEDIA_ROOT) / f["path"]).parent.exists()
                              for f in stored.values())  # fmt: skip
    # Only the project's admins see it.
    other = client_for(people["validator"]).get(f"/api/projects/{project.slug}/imports/{job}/")
    assert other.status_code == 403


def test_a_large_import_with_a_bad_line_fails_whole_with_the_line(
    project, people, client_for, worker
):
    admin = client_for(people["admin"])
    lines = [
        {"id": "ok", "fields": {"text": "t"}, "label_distribution": {"positive": ["w1", "w2"]}},
        {"id": "bad", "fields": {"text": "t"}, "label_distribution": {"great": ["w1", "w2"]}},
    ]
    url = f"/api/projects/{project.slug}/import/votes/"
    job = admin.post(url, {"file": vote_lines(lines)}, format="multipart").json()["job"]
    answer = finished(admin, f"/api/projects/{project.slug}/imports/{job}/")
    assert answer["status"] == "failed"
    assert [e["line"] for e in answer["errors"]] == [2]
    assert "unknown label 'great'" in answer["errors"][0]["message"]
    assert not ValidationItem.objects.filter(project=project).exists()


def test_the_import_page_follows_a_large_import_to_its_end(project, people, worker):
    page = Client()
    page.force_login(people["admin"])
    upload = SimpleUploadedFile("o.csv", b"text,label\nA fine film.,positive\nDull.,negative\n")
    shown = page.post(f"/p/{project.slug}/import/", {"file": upload, "split": "test"})
    token = re.search(r'name="upload" value="(\w+)"', shown.content.decode()).group(1)
    choices = {"upload": token, "split": "test", "map_text": "text", "map_label": "label"}
    response = page.post(f"/p/{project.slug}/import/", {**choices, "action": "import"})
    job = ImportJob.objects.get(project=project)
    assert response.status_code == 302 and response["Location"].endswith(f"/imports/{job.pk}/")
    wait_for(lambda: (job.refresh_from_db(), job.finished)[1], 60, "the import to finish")
    html = page.get(response["Location"]).content.decode()
    assert "succeeded" in html and "Done: batch" in html and "imported: 2" in html
    assert Example.objects.filter(project=project).count() == 2


def test_no_job_exists_before_its_upload_is_stored_whole(project, people, settings, tmp_path):
    """A web worker killed while writing the upload left a job queued for ever beside a partial
    file: the job is now made once the files are whole."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from annotation.imports.background import import_later

    settings.MEDIA_ROOT = tmp_path / "media"

    class Cut(SimpleUploadedFile):
        def chunks(self, chunk_size=None):  # type: ignore[no-untyped-def]
            yield b'{"id": "a", "text": "A good film.", "label": "positive"}\n'
            raise OSError("the connection went away")

    upload = Cut("big.jsonl", b"")
    with pytest.raises(OSError):
        import_later(project=project, user=people["admin"], kind="originals",
                     files={"file": upload}, options={})  # fmt: skip
    assert not ImportJob.objects.exists()
