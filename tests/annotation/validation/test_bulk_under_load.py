"""Bulk actions while validators vote (issue 48, item 2), on the real PostgreSQL: a bulk action
is one transaction with its audit entry, locks items by id and then counters by validator, and
never locks the project row, which every vote's commit checks its keys against; the validators'
counters can be recounted from the votes, and equal that recount after a concurrent drill."""

import json
import random
import threading
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import OperationalError, connection

from annotation.data.services import actions, removal
from annotation.errors import DomainError
from annotation.imports.services.originals import import_examples
from annotation.models import (
    AuditLog,
    Example,
    ImportBatch,
    Perturbation,
    Release,
    ValidationItem,
    ValidatorStatus,
)
from annotation.models.config import DEFAULT_SETTINGS
from annotation.releases.services import release_create
from annotation.validation.services import quality
from annotation.validation.services.queue import next_item
from annotation.validation.services.votes import vote_cast
from tests.factories import ProjectFactory, member, submitted_perturbation, vote_all

pytestmark = pytest.mark.django_db(transaction=True)
SEND_BACK: dict[str, Any] = {
    "action": "send_back",
    "kind": "perturbations",
    "options": {"clear_votes": True},
}


@pytest.fixture
def busy():  # type: ignore[no-untyped-def]
    """A project of 12 submitted perturbations (no controls), 3 votes an item, 5 validators."""
    project = ProjectFactory(settings={**DEFAULT_SETTINGS, "control_rate": 0, "votes_per_item": 3})
    admin = member(project, "boss", "admin")
    author = member(project, "author", "expert")
    validators = [member(project, f"v{n}", "validator") for n in range(5)]
    made = [submitted_perturbation(project, author) for _ in range(12)]
    return project, admin, validators, made


def counters(project: Any) -> dict[int, tuple[int, int]]:
    rows = ValidatorStatus.objects.filter(project=project)
    return {
        v: (r, a) for v, r, a in rows.values_list("validator_id", "resolved_votes", "agreed_votes")
    }


def test_a_bulk_send_back_never_locks_the_project_row(busy, monkeypatch):
    """The send-back locked the project row (select_related in select_for_update); a vote's
    commit, which checks its counters' key against it, waited, and the two deadlocked."""
    project, admin, validators, made = busy
    vote_all(made[0].item, validators[:3], ["negative"] * 3)
    inside, go = threading.Event(), threading.Event()
    apply = quality._apply

    def paused(*args: Any) -> Any:
        inside.set()
        assert go.wait(30)
        return apply(*args)

    monkeypatch.setattr(quality, "_apply", paused)
    errors: list[BaseException] = []

    def send_back() -> None:
        try:
            actions.bulk(**SEND_BACK, project=project, actor=admin, ids=[made[0].pk])
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=send_back)
    thread.start()
    try:
        assert inside.wait(30)
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '3s'")
        try:  # a new validator's counter, as a first vote's commit makes it
            ValidatorStatus.objects.create(project=project, validator=validators[4])
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SET lock_timeout = 0")
    finally:
        go.set()
        thread.join(30)
    assert not errors, errors
    assert Perturbation.objects.get(pk=made[0].pk).status == "submitted"


def test_a_bulk_action_that_fails_changes_nothing_unrecorded(busy, monkeypatch):
    """Rows were committed one by one and the audit entry written last: a failure in between
    left work done that the audit log does not show."""
    project, admin, validators, made = busy
    for p in made[:4]:
        vote_all(p.item, validators[:3], ["negative"] * 3)
    before = {p.pk: p.status for p in Perturbation.objects.filter(pk__in=[p.pk for p in made])}

    def broken(**values: Any) -> None:
        raise OperationalError("the database went away")

    monkeypatch.setattr(actions.AuditLog, "record", broken)
    with pytest.raises(OperationalError):
        actions.bulk(**SEND_BACK, project=project, actor=admin, ids=[p.pk for p in made[:4]])
    after = {p.pk: p.status for p in Perturbation.objects.filter(pk__in=[p.pk for p in made])}
    assert after == before
    assert ValidationItem.objects.filter(votes__isnull=False).distinct().count() == 4


def test_the_recount_command_restores_counters_from_the_votes(busy):
    project, _, validators, made = busy
    mixed = ["negative", "positive", "negative"]
    for n, p in enumerate(made[:5]):
        vote_all(p.item, validators[:3], mixed if n % 2 else ["negative"] * 3)
    right = counters(project)
    assert right and any(r != a for r, a in right.values())
    ValidatorStatus.objects.filter(project=project).update(resolved_votes=7, agreed_votes=1)
    out = StringIO()
    call_command("recount_validators", project.slug, "--check", stdout=out)
    assert "3 validators' counters differ" in out.getvalue()
    assert counters(project) != right  # --check changes nothing
    call_command("recount_validators", project.slug, stdout=out)
    assert counters(project) == right
    call_command("recount_validators", project.slug, "--check", stdout=(out := StringIO()))
    assert "counters match the votes" in out.getvalue()


def imported_and_perturbed(project: Any, author: Any, n: int) -> tuple[ImportBatch, list[int]]:
    """An import of `n` originals, each with a submitted perturbation: what its undo takes."""
    rows = [
        {"id": f"imp{i}", "text": f"the imported film {i} was good", "label": "positive"}
        for i in range(n)
    ]
    data = "\n".join(json.dumps(row) for row in rows).encode()
    batch = import_examples(
        project=project, user=author, data=data, source_name="drill.jsonl", fmt="jsonl"
    )
    pivots = Example.objects.filter(batch=batch)
    return batch, [submitted_perturbation(project, author, pivot=p).pk for p in pivots]


def test_a_drill_of_votes_and_bulk_actions_leaves_counters_equal_to_a_recount(
    busy, settings, tmp_path
):
    """Five validators vote while an admin sends back (with and without the votes), accepts,
    tags, deletes, undoes an import and publishes: no error but a refusal, every action in the
    audit log, and every counter equal to a recount from the votes."""
    project, admin, validators, made = busy
    settings.MEDIA_ROOT = tmp_path / "media"  # the releases' bundles
    batch, imported = imported_and_perturbed(project, admin, 4)
    unexpected: list[BaseException] = []
    done = threading.Event()
    logged = []

    def vote(validator: Any) -> None:
        rng = random.Random(validator.pk)
        try:
            while not done.is_set():
                item = next_item(project=project, validator=validator)
                if item is None:
                    if done.wait(0.05):
                        return
                    continue
                try:
                    label = rng.choice(["negative", "negative", "positive"])
                    vote_cast(project=project, item_id=item.pk, validator=validator, label=label)
                except DomainError:
                    pass  # the item was sent back or decided meanwhile: a 4xx, as it should be
        except BaseException as error:
            unexpected.append(error)
        finally:
            connection.close()

    def administer() -> None:
        rng = random.Random(0)
        ids = [p.pk for p in made]
        clear: dict[str, Any] = {"clear_votes": True}
        steps: list[list[tuple[str, dict[str, Any]]]] = [
            [
                ("send_back", clear),
                ("send_back", {}),
                ("tag", {"tag": "negation"}),
                ("undo", {}),
                ("send_back", clear),
                ("accept", {"reason": "drill"}),
                ("publish", {"version": version}),
                ("send_back", clear),
                ("untag", {"tag": "negation"}),
                ("delete", {}),
            ]
            for version in ("1", "2")  # the second undo is refused: it was undone
        ]
        plan = [step for part in steps for step in part]
        try:
            for action, options in plan:
                chosen = rng.sample(ids, 4)
                try:
                    if action == "undo":
                        removal.batch_undo(batch=batch, actor=admin)
                        logged.append(action)
                        continue
                    if action == "publish":
                        release_create(project=project, user=admin, **options)
                        logged.append(action)
                        continue
                    actions.bulk(
                        project=project,
                        actor=admin,
                        action=action,
                        kind="perturbations",
                        ids=chosen,
                        options=options,
                    )
                    logged.append(action)
                except DomainError:
                    pass
                if action == "delete":
                    ids = [i for i in ids if i not in chosen] or ids
                done.wait(0.1)
        except BaseException as error:
            unexpected.append(error)
        finally:
            done.set()
            connection.close()

    threads = [threading.Thread(target=vote, args=(v,)) for v in validators]
    threads.append(threading.Thread(target=administer))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(thread.is_alive() for thread in threads)
    assert not unexpected, unexpected
    entries = AuditLog.objects.filter(project=project)
    assert entries.filter(action__startswith="bulk_").count() + entries.filter(
        action="items_deleted"
    ).count() == len([a for a in logged if a not in ("undo", "publish")])
    assert entries.filter(action="import_undone").count() == logged.count("undo") == 1
    assert entries.filter(action="release_created").count() == logged.count("publish") == 2
    assert not Perturbation.objects.filter(pk__in=imported).exists()
    assert Release.objects.filter(project=project).count() == 2
    right = quality.counters_recounted(project)
    assert {v: c for v, c in counters(project).items() if any(c)} == {
        v: c for v, c in right.items() if any(c)
    }
