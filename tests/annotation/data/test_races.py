"""Races between deletes, undos, publishes and votes (issue 48, item 5), on the real PostgreSQL
with a thread per request: the loser answers 409 with what to do, never 500, and rolls back
whole. Each race is made certain: one side waits at a named point until the other is where the
audit met it."""

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.db.models.signals import post_delete

from annotation.data.services import removal
from annotation.errors import DomainError
from annotation.imports.services.originals import import_examples
from annotation.models import (
    AuditLog,
    Example,
    ImportBatch,
    Lease,
    Perturbation,
    Project,
    Release,
    ValidationItem,
    Vote,
)
from annotation.releases import services as releases
from annotation.validation.services.queue import next_item
from tests.factories import (
    ExampleFactory,
    ProjectFactory,
    member,
    submitted_perturbation,
    vote_all,
)

pytestmark = pytest.mark.django_db(transaction=True)


class Thread(threading.Thread):
    """A request on a thread of its own, with its own connection: what it returned or raised."""

    def __init__(self, work: Callable[[], Any]):
        super().__init__(daemon=True)
        self.work = work
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.work()
        except BaseException as error:
            self.error = error
        finally:
            connection.close()

    def outcome(self) -> Any:
        self.join(60)
        assert not self.is_alive(), "the request never finished"
        return self.error or self.result


def wait_for_a_lock_wait() -> None:
    """Until a connection of this database waits for a row another transaction holds."""
    query = (
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
        "AND datname = current_database()"
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_stat_clear_snapshot()")  # fresh, inside a transaction too
            cursor.execute(query)
            if cursor.fetchone()[0]:
                return
        time.sleep(0.05)
    raise AssertionError("no request waited for a lock")


def is_conflict(outcome: Any, *words: str) -> bool:
    return (
        isinstance(outcome, DomainError)
        and outcome.code == "conflict"
        and all(word in outcome.message for word in words)
    )


def accepted(project: Project, author: Any, n: int) -> list[Perturbation]:
    made = []
    for i in range(n):
        text = f"the film {i} was good"
        pivot = ExampleFactory(project=project, external_id=f"s{i}", fields={"text": text})
        made.append(submitted_perturbation(project, author, pivot=pivot))
    Perturbation.objects.filter(pk__in=[p.pk for p in made]).update(status="accepted")
    return made


def test_parallel_undos_of_one_import_undo_it_once_and_answer_409(project, people):
    """Eight undos at once: 1 x 200, 4 x 404 and 3 x 500 (ImportBatch.DoesNotExist)."""
    rows = [{"id": f"u{n}", "text": "a line", "label": "positive"} for n in range(20)]
    data = "\n".join(json.dumps(row) for row in rows).encode()
    batch = import_examples(
        project=project, user=people["admin"], data=data, source_name="undo.jsonl", fmt="jsonl"
    )
    start = threading.Barrier(8)

    def undo() -> Any:
        start.wait()
        return removal.batch_undo(batch=batch, actor=people["admin"])

    threads = [Thread(undo) for _ in range(8)]
    for thread in threads:
        thread.start()
    outcomes = [thread.outcome() for thread in threads]
    done = [o for o in outcomes if isinstance(o, removal.Removal)]
    assert len(done) == 1 and done[0].counts["originals"] == 20
    assert all(is_conflict(o, "already undone") for o in outcomes if o is not done[0]), outcomes
    assert not ImportBatch.objects.exists() and not Example.objects.exists()
    assert AuditLog.objects.filter(action="import_undone").count() == 1


def test_a_bulk_delete_during_a_publish_answers_409_and_deletes_nothing(
    project, people, settings, tmp_path, monkeypatch
):
    """The publish stored its entries; the delete waited for them and failed at its commit."""
    settings.MEDIA_ROOT = tmp_path / "media"
    made = accepted(project, people["expert"], 3)
    stored, go = threading.Event(), threading.Event()
    # The statistics come once the entries are stored, on either path (rows or columns).
    for name in ("release_statistics", "figures"):
        statistics = getattr(releases, name)

        def paused(*args: Any, statistics: Any = statistics) -> Any:
            stored.set()
            assert go.wait(30)
            return statistics(*args)

        monkeypatch.setattr(releases, name, paused)
    publish = Thread(lambda: releases.release_create(project=project, user=None, version="1"))
    publish.start()
    assert stored.wait(30)
    delete = Thread(
        lambda: removal.items_delete(
            project=project, actor=people["admin"], perturbations=[p.pk for p in made]
        )
    )
    delete.start()
    wait_for_a_lock_wait()
    go.set()
    assert isinstance(publish.outcome(), Release)
    assert is_conflict(delete.outcome(), "release", "again"), delete.outcome()
    assert Perturbation.objects.count() == 3
    assert not AuditLog.objects.filter(action="items_deleted").exists()


def test_a_publish_during_a_bulk_delete_answers_409_and_publishes_nothing(
    project, people, settings, tmp_path, monkeypatch
):
    """The delete had not committed; the publish chose what it deleted, and waited for it."""
    settings.MEDIA_ROOT = tmp_path / "media"
    made = accepted(project, people["expert"], 3)
    deleted, go = threading.Event(), threading.Event()

    class PausedLog:
        @staticmethod
        def record(**values: Any) -> Any:
            deleted.set()
            assert go.wait(30)
            return AuditLog.record(**values)

    monkeypatch.setattr(removal, "AuditLog", PausedLog)
    delete = Thread(
        lambda: removal.items_delete(
            project=project, actor=people["admin"], perturbations=[made[0].pk]
        )
    )
    delete.start()
    assert deleted.wait(30)
    publish = Thread(lambda: releases.release_create(project=project, user=None, version="1"))
    publish.start()
    wait_for_a_lock_wait()
    go.set()
    assert isinstance(delete.outcome(), removal.Removal)
    assert is_conflict(publish.outcome(), "deleted", "again"), publish.outcome()
    assert not Release.objects.exists()
    assert not list((tmp_path / "media").rglob("*.zip"))
    assert releases.release_create(project=project, user=None, version="1").counts


def test_deleting_a_project_while_a_validator_is_served_answers_409(project, people):
    """The delete had collected the leases; a validator was served an item before it deleted
    the items: the lease's key failed the delete's commit."""
    project.settings = {**project.settings, "control_rate": 0}  # perturbations' items only
    project.save()
    pk = project.pk  # the delete's collector clears it on the instance, rolled back or not
    voted = submitted_perturbation(project, people["expert"])
    open_item = submitted_perturbation(project, people["expert"]).item
    first, second = (member(project, f"val{n}", "validator") for n in range(2))
    vote_all(voted.item, [first], ["negative"])
    collected, served = threading.Event(), threading.Event()

    def pause(sender: Any, **kwargs: Any) -> None:  # votes go after leases, before items
        if threading.current_thread() is deleting and not collected.is_set():
            collected.set()
            assert served.wait(30)

    def serve() -> Any:
        assert collected.wait(30)
        try:
            return next_item(project=project, validator=second)
        finally:
            served.set()

    post_delete.connect(pause, sender=Vote, weak=False)
    try:
        deleting = Thread(
            lambda: removal.project_delete(
                project=project, actor=people["admin"], confirm=project.slug
            )
        )
        validator = Thread(serve)
        deleting.start()
        validator.start()
        assert isinstance(validator.outcome(), ValidationItem)
        outcome = deleting.outcome()
    finally:
        post_delete.disconnect(pause, sender=Vote)
    assert is_conflict(outcome, "validators", "again"), outcome
    assert Project.objects.filter(pk=pk).exists()
    assert ValidationItem.objects.filter(pk=open_item.pk).exists()
    assert Lease.objects.filter(validator=second).exists()
    again = Project.objects.get(pk=pk)
    removal.project_delete(project=again, actor=people["admin"], confirm=again.slug)
    assert not Project.objects.filter(pk=pk).exists()


def test_deleting_a_project_removes_its_uploads(project, people, settings, tmp_path, monkeypatch):
    """A background import's 23 MB upload stayed under MEDIA_ROOT/imports/."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from annotation.imports import background
    from annotation.imports.background import import_later
    from annotation.imports.preview import stage

    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(background.run_import_task, "delay", lambda pk: None)  # no worker
    upload = SimpleUploadedFile("big.jsonl", b'{"id": "x", "text": "t"}\n')
    job = import_later(
        project=project, user=people["admin"], kind="originals", files={"file": upload}, options={}
    )
    folder = Path(settings.MEDIA_ROOT) / Path(job.files["file"]["path"]).parent
    other = ProjectFactory(slug="other-project")
    upload = SimpleUploadedFile("k.jsonl", b"{}")
    kept = import_later(
        project=other, user=people["admin"], kind="originals", files={"file": upload}, options={}
    )
    kept_folder = Path(settings.MEDIA_ROOT) / Path(kept.files["file"]["path"]).parent
    token = stage(project, people["admin"], {"file": SimpleUploadedFile("s.jsonl", b"{}")})
    staged = Path(settings.MEDIA_ROOT) / "staged" / token
    assert folder.is_dir() and kept_folder.is_dir() and staged.is_dir()
    removal.project_delete(project=project, actor=people["admin"], confirm=project.slug)
    assert not folder.exists() and not staged.exists()
    assert kept_folder.is_dir()


def test_a_vote_whose_project_is_deleted_before_its_counters_answers_404(
    project, people, monkeypatch
):
    """The vote that resolved an item committed; the project was deleted before the voters'
    counters were written, whose key then failed: the vote answered 500."""
    from annotation.validation.services import quality
    from annotation.validation.services.votes import vote_cast
    from tests.factories import serve

    project.settings = {**project.settings, "control_rate": 0, "votes_per_item": 2}
    project.save()
    pk = project.pk
    item = submitted_perturbation(project, people["expert"]).item
    first, second = (member(project, f"val{n}", "validator") for n in range(2))
    vote_all(item, [first], ["negative"])
    serve(item, second)
    counting, deleted = threading.Event(), threading.Event()
    apply = quality._apply

    def paused(*args: Any) -> Any:  # after the vote's commit, before its counters
        counting.set()
        assert deleted.wait(30)
        return apply(*args)

    monkeypatch.setattr(quality, "_apply", paused)
    voting = Thread(
        lambda: vote_cast(project=project, item_id=item.pk, validator=second, label="negative")
    )
    voting.start()
    assert counting.wait(30)
    monkeypatch.setattr(quality, "_apply", apply)  # the delete's own counting goes on
    again = Project.objects.get(pk=pk)
    removal.project_delete(project=again, actor=people["admin"], confirm=again.slug)
    deleted.set()
    outcome = voting.outcome()
    assert isinstance(outcome, DomainError) and outcome.code == "not_found", outcome
    assert "deleted" in outcome.message
    assert not Project.objects.filter(pk=pk).exists()
    assert not Vote.objects.filter(validator=second).exists()


def test_a_validator_waiting_for_an_item_that_is_deleted_is_served_another(project, people):
    """Every candidate was locked, so the queue waited for the best one by its key; a delete
    held it and committed: the row was gone and the next item answered 500 (IndexError)."""
    from django.db import transaction

    project.settings = {**project.settings, "control_rate": 0}  # perturbations' items only
    project.save()
    doomed = submitted_perturbation(project, people["expert"]).item
    validator = people["validator"]
    with transaction.atomic():
        ValidationItem.objects.select_for_update().get(pk=doomed.pk)
        ValidationItem.objects.filter(pk=doomed.pk).delete()
        serving = Thread(lambda: next_item(project=project, validator=validator))
        serving.start()
        wait_for_a_lock_wait()
    assert serving.outcome() is None  # nothing else is open: none, not an error
    kept = submitted_perturbation(project, people["expert"]).item
    assert next_item(project=project, validator=validator) == kept


def test_two_bulk_tags_of_the_same_rows_at_once_answer_200_and_are_both_logged(
    project, people, monkeypatch
):
    """Issue 58, item 8: the second tag read the rows' tags before the first committed, then
    inserted the same (perturbation, tag) pairs: 500 (IntegrityError on the pair's key),
    rolled back without its audit entry. The first waits before its audit entry until the
    second waits for it."""
    from rest_framework.test import APIClient

    from annotation.data.services import actions

    made = [submitted_perturbation(project, people["expert"]) for _ in range(3)]
    inserted, go = threading.Event(), threading.Event()

    class PausedLog:
        @staticmethod
        def record(**values: Any) -> Any:
            if not inserted.is_set():
                inserted.set()
                assert go.wait(30)
            return AuditLog.record(**values)

    monkeypatch.setattr(actions, "AuditLog", PausedLog)

    def tag() -> Any:
        client = APIClient()
        client.force_authenticate(people["admin"])
        body = {"action": "tag", "ids": [p.pk for p in made], "tag": "intensity"}
        return client.post(f"/api/projects/{project.slug}/items/bulk/", body, format="json")

    first = Thread(tag)
    first.start()
    assert inserted.wait(30)
    second = Thread(tag)
    second.start()
    wait_for_a_lock_wait()
    go.set()
    answers = [first.outcome(), second.outcome()]
    assert [getattr(a, "status_code", a) for a in answers] == [200, 200], answers
    assert [a.json()["done"] for a in answers] == [3, 0]
    assert answers[1].json()["left"] == {"already tagged": 3}
    assert AuditLog.objects.filter(action="bulk_tag").count() == 2
    tagged = Perturbation.tags.through.objects.filter(perturbation__in=made, tag__name="intensity")
    assert tagged.count() == 3


@pytest.mark.parametrize("loser", ["vote", "delete"])
def test_a_vote_during_the_projects_delete_answers_201_or_409(project, people, loser):
    """Issue 58, item 8: the delete had taken the validator's lease away (not committed) and
    waited for the item the vote had locked, while the vote waited for the lease: PostgreSQL
    broke the cycle by aborting one of them, which answered 500. Whichever PostgreSQL aborts
    now answers 409 (nothing done: vote or delete again), and the other goes through. The
    aborted one is the first to look for a cycle once it has formed: the vote, when the delete
    waits at once; the delete, when it waits later than the vote's look (deadlock_timeout)."""
    from rest_framework.test import APIClient

    project.settings = {**project.settings, "control_rate": 0}
    project.save()
    pk, slug = project.pk, project.slug
    voted = submitted_perturbation(project, people["expert"])
    vote_all(voted.item, [member(project, "val0", "validator")], ["negative"])
    second = member(project, "val1", "validator")
    served = next_item(project=project, validator=second)
    collected, go = threading.Event(), threading.Event()

    def pause(sender: Any, **kwargs: Any) -> None:  # votes go after leases, before items
        if threading.current_thread() is deleting and not collected.is_set():
            collected.set()
            assert go.wait(30)

    def as_user(user: Any) -> APIClient:
        client = APIClient()
        client.force_authenticate(user)
        return client

    post_delete.connect(pause, sender=Vote, weak=False)
    try:
        deleting = Thread(
            lambda: as_user(people["admin"]).delete(f"/api/projects/{slug}/?confirm={slug}")
        )
        deleting.start()
        assert collected.wait(30)
        voting = Thread(
            lambda: as_user(second).post(
                f"/api/projects/{slug}/validation/{served.pk}/vote/",
                {"label": "negative"},
                format="json",
            )
        )
        voting.start()
        wait_for_a_lock_wait()
        if loser == "delete":
            time.sleep(1.5)  # past the vote's look for a cycle, which found none yet
        go.set()
        outcomes = {"vote": voting.outcome(), "delete": deleting.outcome()}
    finally:
        post_delete.disconnect(pause, sender=Vote)
    statuses = {name: getattr(o, "status_code", o) for name, o in outcomes.items()}
    assert statuses == {
        "vote": 409 if loser == "vote" else 201,
        "delete": 409 if loser == "delete" else 204,
    }, statuses
    assert "again" in outcomes[loser].json()["detail"]
    assert Project.objects.filter(pk=pk).exists() == (loser == "delete")
    assert Vote.objects.filter(validator=second).exists() == (loser == "delete")
