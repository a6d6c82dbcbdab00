"""Every import is announced once it ends, succeeded or failed, wherever it ran: in the
request (a small upload, a published dataset into a new project), a management command, or on
a worker. Announced means one `import.finished` delivery to each webhook that wants it, and
one notification to whoever started it. The deliveries' tasks are caught here, not sent."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.imports.tasks import run_import_task
from annotation.models import ImportJob, Notification, Project, Webhook, WebhookDelivery
from tests.annotation.imports import published_files
from tests.annotation.imports.test_published_real import GARDNER, real
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"


def hook(project: Project) -> Webhook:
    return Webhook.objects.create(
        project=project, url="https://example.org/", events=["import.finished"]
    )


@pytest.fixture
def committed(django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    """Run `work`, then what it left for after its commit; `work`'s answer."""

    def run(work):  # type: ignore[no-untyped-def]
        with django_capture_on_commit_callbacks() as after:
            try:
                answer = work()
            except CommandError as error:
                answer = error
        with django_capture_on_commit_callbacks():  # the deliveries' tasks, not sent
            for callback in after:
                callback()
        return answer

    return run


def announced(project: Project) -> list[dict]:  # type: ignore[type-arg]
    deliveries = WebhookDelivery.objects.filter(webhook__project=project).order_by("pk")
    assert {d.event for d in deliveries} <= {"import.finished"}
    return [d.payload["data"]["import"] for d in deliveries]


def told(user) -> list[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    rows = Notification.objects.filter(user=user).order_by("pk")
    return list(rows.values_list("kind", "text", "url"))


def originals(*rows: dict) -> SimpleUploadedFile:  # type: ignore[type-arg]
    return SimpleUploadedFile("reviews.jsonl", "\n".join(json.dumps(r) for r in rows).encode())


def test_an_import_in_the_request_is_announced_once_and_tells_its_starter(
    project, people, client_for, committed
):
    hook(project)
    url = f"/api/projects/{project.slug}/examples/import/"
    file = originals({"text": "Nice.", "label": "positive"})
    answer = committed(lambda: client_for(people["admin"]).post(url, {"file": file}))
    assert answer.status_code == 201, answer.json()
    (said,) = announced(project)
    assert said == {
        "id": None,
        "kind": "originals",
        "status": "succeeded",
        "error": "",
        "batch": answer.json()["batch"],
    }
    assert told(people["admin"]) == [
        (
            "import.finished",
            f"Your import in {project.name} succeeded.",
            f"/p/{project.slug}/import/",
        )
    ]


def test_a_rejected_import_in_the_request_tells_its_starter_it_failed(
    project, people, client_for, committed
):
    hook(project)
    url = f"/api/projects/{project.slug}/examples/import/"
    file = originals({"text": "Nice.", "label": "terrible"})
    answer = committed(lambda: client_for(people["admin"]).post(url, {"file": file}))
    assert answer.status_code == 400
    (said,) = announced(project)
    assert (said["status"], said["error"], said["batch"]) == (
        "failed",
        "The file was rejected.",
        None,
    )
    ((kind, text, _),) = told(people["admin"])
    assert kind == "import.finished"
    assert text == f"Your import in {project.name} failed. The file was rejected."
    assert not project.examples.exists()


def test_an_import_on_the_page_is_announced_once(project, people, committed):
    hook(project)
    browser = Client()
    browser.force_login(people["admin"])
    line = {"id": "x1", "fields": {"text": "Hi."}, "label_distribution": {"positive": ["w1", "w2"]}}
    file = SimpleUploadedFile("votes.jsonl", json.dumps(line).encode())
    page = f"/p/{project.slug}/import/votes/"
    answer = committed(lambda: browser.post(page, {"file": file}))
    assert answer.status_code == 302, answer.content.decode()
    assert [(s["kind"], s["status"]) for s in announced(project)] == [("votes", "succeeded")]
    assert len(told(people["admin"])) == 1


def test_a_published_set_into_a_new_project_is_announced_in_the_project_it_made(
    db, client_for, committed
):
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    files, _ = published_files.ropes()
    uploads = {f"file{n}": SimpleUploadedFile(name, content)
               for n, (name, content) in enumerate(files, 1)}  # fmt: skip
    body = {"dataset": "ropes", "slug": "qa", **uploads}
    answer = committed(lambda: client_for(root).post("/api/import/published/", body))
    assert answer.status_code == 201, answer.json()
    assert told(root) == [
        ("import.finished", "Your import in ROPES contrast sets succeeded.", "/p/qa/import/")
    ]
    taken = committed(lambda: client_for(root).post("/api/import/published/", body))
    assert taken.status_code == 400  # no project made: nothing to announce it in
    assert len(told(root)) == 1


def test_the_commands_imports_are_announced_once_and_tell_no_one(
    project, people, tmp_path, committed
):
    hook(project)
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    good.write_text("text,label\nNice.,positive\n")
    bad.write_text("text,label\nAwful.,terrible\n")
    committed(lambda: call_command("import_examples", project.slug, str(good), "--no-progress"))
    failed = committed(
        lambda: call_command("import_examples", project.slug, str(bad), "--no-progress")
    )
    assert isinstance(failed, CommandError)
    said = announced(project)
    assert [(s["kind"], s["status"]) for s in said] == [
        ("originals", "succeeded"),
        ("originals", "failed"),
    ]
    assert said[0]["batch"] == project.import_batches.get().pk
    assert not Notification.objects.exists()  # a command has no one who started it


def test_the_published_command_into_a_project_is_announced_once(db, tmp_path, committed):
    files, _ = published_files.nlvr2()
    paths = []
    for name, content in files:
        (tmp_path / name).write_bytes(content)
        paths.append(str(tmp_path / name))
    call_command("import_published", "nlvr2", *paths, "--project", "vision")
    vision = Project.objects.get(slug="vision")
    hook(vision)
    committed(lambda: call_command("import_published", "nlvr2", *paths, "--project", "vision"))
    assert [(s["kind"], s["status"]) for s in announced(vision)] == [("published", "succeeded")]


def test_a_workers_import_is_announced_once_with_its_job(
    project, people, client_for, committed, settings, django_capture_on_commit_callbacks
):
    hook(project)
    settings.IMPORT_BACKGROUND_BYTES = 10  # a large upload: the request queues it
    url = f"/api/projects/{project.slug}/examples/import/"
    file = originals({"text": "Nice.", "label": "positive"})
    with django_capture_on_commit_callbacks():  # its task is run below, not queued
        queued = client_for(people["admin"]).post(url, {"file": file})
    assert queued.status_code == 202 and not announced(project)
    job = ImportJob.objects.get()
    committed(lambda: run_import_task.apply(args=(job.pk,)))
    job.refresh_from_db()
    (said,) = announced(project)
    assert (said["id"], said["status"], said["batch"]) == (job.pk, "succeeded", job.result["batch"])
    (row,) = told(people["admin"])
    assert row[2] == f"/p/{project.slug}/imports/{job.pk}/"


def test_the_real_nlvr2_contrast_set_through_the_command_is_announced_once(  # type: ignore[no-untyped-def]
    db, committed
):
    """allenai/contrast-sets' own NLVR2 file, unedited (../shared/data): 994 examples."""
    path = str(real(GARDNER) / "contrast_set_nlvr2.jsonl")
    call_command("import_published", "nlvr2", path, "--project", "vision")
    vision = Project.objects.get(slug="vision")
    hook(vision)
    committed(lambda: call_command("import_published", "nlvr2", path, "--project", "vision"))
    (said,) = announced(vision)
    assert (said["kind"], said["status"]) == ("published", "succeeded")
    assert said["batch"] == vision.import_batches.order_by("pk").last().pk
