"""The Data page's text search and the index that imports leave to a worker (migration 0024,
annotation.data.services.search_index): an import's rows are found before the worker indexes
them and after; rows written on the pages are indexed at once; the indexing never touches the
import's job. The expected rows are picked by each test from the texts it wrote."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, transaction
from kombu.exceptions import OperationalError

from annotation.data import tasks
from annotation.data.services.search_index import index_project, projects_waiting
from annotation.data.tasks import index_search_task
from annotation.imports.background import import_later
from annotation.imports.services.running import run_import
from annotation.models import Example, ImportJob, Perturbation
from tests.annotation.data.test_data import walk
from tests.factories import ExampleFactory, submitted_perturbation
from tests.workers import start_worker, stop, wait_for, worker_on_test_db

pytestmark = pytest.mark.django_db

TEXTS = ["A quiet film about the sea.", "A loud film about the city.", "Nothing ABOUT THE SEA."]


def originals_file(texts: list[str], prefix: str = "o") -> SimpleUploadedFile:
    lines = [
        json.dumps({"id": f"{prefix}{n}", "text": text, "label": "positive"})
        for n, text in enumerate(texts)
    ]
    return SimpleUploadedFile("originals.jsonl", "\n".join(lines).encode())


def sets_file() -> SimpleUploadedFile:
    line = {
        "original": {
            "id": "s1",
            "fields": {"text": "A calm day about the sea."},
            "label": "positive",
        },
        "perturbations": [
            {"fields": {"text": text}, "label": "negative", "tags": ["negation"]}
            for text in ("A stormy day about the sea.", "A stormy day in town.")
        ],
    }
    return SimpleUploadedFile("sets.jsonl", json.dumps(line).encode())


def search(client, project, kind: str, q: str) -> list[int]:  # type: ignore[no-untyped-def]
    return walk(
        client, f"/api/projects/{project.slug}/items/?kind={kind}&order=oldest&size=2&q={q}"
    )


def matching(model, project, q: str) -> list[int]:  # type: ignore[no-untyped-def]
    rows = model.objects.filter(project=project).order_by("id")
    return [row.pk for row in rows if q.lower() in row.fields["text"].lower()]


def test_an_imports_rows_are_found_before_and_after_the_worker_indexes_them(
    project, people, client_for
):
    admin = client_for(people["admin"])
    ExampleFactory(project=project, fields={"text": "Written here, about the sea."})
    response = admin.post(
        f"/api/projects/{project.slug}/examples/import/",
        {"file": originals_file(TEXTS)},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    response = admin.post(
        f"/api/projects/{project.slug}/import/sets/",
        {"format": "sets_jsonl", "accept": "true", "file": sets_file()},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    imported = Example.objects.filter(project=project, batch__isnull=False)
    assert imported.count() == 4 and not imported.filter(searchable=True).exists()
    assert not Perturbation.objects.filter(project=project, searchable=True).exists()
    expected_originals = matching(Example, project, "about the sea")
    expected_perturbations = matching(Perturbation, project, "about the sea")
    assert len(expected_originals) == 4 and len(expected_perturbations) == 1  # both kinds of row

    def found_alike() -> None:
        assert search(admin, project, "originals", "ABOUT the sea") == expected_originals
        assert search(admin, project, "perturbations", "about THE SEA") == expected_perturbations
        assert search(admin, project, "originals", "o1") == [imported.get(external_id="o1").pk]

    found_alike()
    assert index_project(project.pk, chunk=4) == 4 + 2  # the worker's step, 4 rows at a time
    assert not Example.objects.filter(searchable=False).exists()
    assert not Perturbation.objects.filter(searchable=False).exists()
    found_alike()
    assert projects_waiting() == []


def test_rows_written_on_the_pages_are_searchable_at_once(project, people, client_for):
    original = ExampleFactory(project=project, fields={"text": "A film about the sea."})
    perturbation = submitted_perturbation(
        project, people["expert"], pivot=original, text="A film about the city."
    )
    assert Example.objects.get(pk=original.pk).searchable
    assert Perturbation.objects.get(pk=perturbation.pk).searchable
    assert projects_waiting() == []
    admin = client_for(people["admin"])
    assert search(admin, project, "perturbations", "about the city") == [perturbation.pk]


def test_a_task_indexes_a_part_and_queues_the_rest_behind_what_waits(
    project, people, client_for, monkeypatch
):
    admin = client_for(people["admin"])
    response = admin.post(
        f"/api/projects/{project.slug}/examples/import/",
        {"file": originals_file(TEXTS)},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    queued: list[int] = []
    monkeypatch.setattr(tasks, "TASK_ROWS", 2)
    monkeypatch.setattr(tasks.index_search_task, "delay", queued.append)  # the broker
    tasks.index_search_task(project.pk)  # as the worker runs it
    assert Example.objects.filter(project=project, searchable=True).count() == 2
    assert queued == [project.pk]
    tasks.index_search_task(queued.pop())
    assert not Example.objects.filter(project=project, searchable=False).exists()
    assert queued == []  # nothing left: nothing queued


def test_once_an_import_is_indexed_the_planner_knows_how_common_its_texts_are(
    project, people, client_for
):
    """An import's own ANALYZE leaves out the statistics of the texts the search reads; the
    end of its indexing refreshes them, so that a text in every imported row is not planned as
    a rare one (which read every row of a large import for a page)."""
    admin = client_for(people["admin"])
    texts = [f"Review {n}: the quokka smiled." for n in range(400)]
    response = admin.post(
        f"/api/projects/{project.slug}/examples/import/",
        {"file": originals_file(texts)},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    tasks.index_search_task(project.pk)  # as the worker runs it: every row, then the statistics
    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN (FORMAT JSON) SELECT 1 FROM annotation_example"
            " WHERE searchable AND UPPER(fields::text) LIKE %s",
            ["%QUOKKA SMILED%"],
        )
        plan = cursor.fetchone()[0]
    assert plan[0]["Plan"]["Plan Rows"] >= len(texts) / 2


@pytest.mark.django_db(transaction=True)
def test_a_broker_that_refuses_the_indexing_leaves_the_import_succeeded(
    project, people, client_for, settings, tmp_path, monkeypatch
):
    """The import commits with its job's success; the indexing is queued after that commit,
    and sending it failing changes nothing of the job: its rows are found unindexed, and the
    sweep names their project."""
    settings.MEDIA_ROOT = tmp_path / "media"
    sent: list[int] = []

    def refused(project_id: int) -> None:
        sent.append(project_id)
        raise OperationalError("the broker is away")

    monkeypatch.setattr(index_search_task, "delay", refused)
    with transaction.atomic():
        job = import_later(
            project=project, user=None, kind=ImportJob.Kind.ORIGINALS,
            files={"file": originals_file(TEXTS)}, options={},
        )  # fmt: skip
    job = run_import(job.pk)
    assert job is not None and job.status == "succeeded", job.error
    assert job.result["imported"] == 3 and job.error == ""
    assert sent == [project.pk]
    assert projects_waiting() == [project.pk]
    admin = client_for(people["admin"])
    assert search(admin, project, "originals", "about the sea") == matching(
        Example, project, "about the sea"
    )


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_indexes_a_large_import_after_its_success_and_a_new_worker_ends_what_one_left(
    project, people, client_for, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    env = worker_on_test_db(settings.MEDIA_ROOT, tmp_path / "var")
    texts = [f"Review {n}: {'about the sea' if n % 7 == 0 else 'a city'}." for n in range(3000)]
    worker = start_worker(env, tmp_path / "first.log")
    try:
        with transaction.atomic():
            job = import_later(
                project=project, user=None, kind=ImportJob.Kind.ORIGINALS,
                files={"file": originals_file(texts)}, options={},
            )  # fmt: skip
        wait_for(lambda: ImportJob.objects.get(pk=job.pk).finished, 60, "the import")
        wait_for(
            lambda: not Example.objects.filter(project=project, searchable=False).exists(),
            60,
            "the worker to index the import",
        )
    finally:
        stop(worker)
    assert ImportJob.objects.get(pk=job.pk).status == "succeeded"
    assert Example.objects.filter(project=project).count() == 3000
    # A worker killed while indexing leaves rows unindexed; the next one's sweep ends it.
    Example.objects.filter(project=project, pk__in=matching(Example, project, "review 1")).update(
        searchable=False
    )
    admin = client_for(people["admin"])
    expected = matching(Example, project, "about the sea")
    assert search(admin, project, "originals", "about the sea") == expected
    worker = start_worker(env, tmp_path / "second.log")
    try:
        wait_for(lambda: projects_waiting() == [], 60, "the sweep to index what was left")
    finally:
        stop(worker)
    assert search(admin, project, "originals", "about the sea") == expected
