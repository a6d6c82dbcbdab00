"""The Data API (docs/data.md): rows filtered and paged by keyset, one row's history, bulk
actions, the undo of an import, deleting a project, and the audit log. The expected rows and
counts are built by each test from what it made, never read from the code under test."""

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.db.models import Q
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import (
    AuditLog,
    Example,
    ImportBatch,
    Perturbation,
    Project,
    ValidationItem,
    ValidatorStatus,
    Vote,
)
from tests.annotation.imports.test_published_real import real
from tests.conftest import SHARED_DATA
from tests.factories import ExampleFactory, member, submitted_perturbation, vote_all

pytestmark = pytest.mark.django_db

CAD = SHARED_DATA / "cad-sentiment"


@pytest.fixture
def validators(project):  # type: ignore[no-untyped-def]
    return [member(project, f"val{n}", "validator") for n in range(5)]


def snapshot(project: Project) -> dict[str, object]:
    """Everything an undo must leave as it was."""
    return {
        "examples": sorted(Example.objects.filter(project=project).values_list("pk", flat=True)),
        "perturbations": sorted(project.perturbations.values_list("pk", "status")),
        "items": sorted(
            ValidationItem.objects.filter(project=project).values_list(
                "pk", "status", "counted_votes"
            )
        ),
        "votes": sorted(Vote.objects.filter(item__project=project).values_list("pk", flat=True)),
        "counters": sorted(
            ValidatorStatus.objects.filter(project=project).values_list(
                "validator__username", "resolved_votes", "agreed_votes", "qualified"
            )
        ),
    }


def release_bytes(release) -> str:  # type: ignore[no-untyped-def]
    return hashlib.sha256(
        (Path(django_settings.MEDIA_ROOT) / release.bundle).read_bytes()
    ).hexdigest()


def import_cad_dev(client, project):  # type: ignore[no-untyped-def]
    """CAD's dev reviews and their revisions as paired sets, sent to validation."""
    folder = real(CAD)
    original, contrast = folder / "orig" / "dev.tsv", folder / "new" / "dev.tsv"
    return client.post(
        f"/api/projects/{project.slug}/import/sets/",
        {
            "format": "paired_tsv",
            "original": SimpleUploadedFile("orig-dev.tsv", original.read_bytes()),
            "contrast": SimpleUploadedFile("new-dev.tsv", contrast.read_bytes()),
            "mapping": json.dumps({"text": "Text", "label": "Sentiment"}),
            "labels": json.dumps({"Positive": "positive", "Negative": "negative"}),
            "tags": "negation",
        },
        format="multipart",
    )


# The voters' counts are taken once the vote commits (transaction.on_commit).
@pytest.mark.django_db(transaction=True)
def test_cads_import_is_undone_whole_and_nothing_else_changes(
    project, people, validators, released, client_for
):
    # Before the import: a release, and a perturbation resolved by five votes.
    earlier = submitted_perturbation(project, people["expert"])
    vote_all(earlier.item, validators, ["negative"] * 4 + ["positive"])
    before, release_sha = snapshot(project), release_bytes(released)
    admin = client_for(people["admin"])
    response = import_cad_dev(admin, project)
    assert response.status_code == 201, response.json()
    batch = response.json()["batch"]
    rows = (real(CAD) / "orig" / "dev.tsv").read_text().count("\n") - 1
    added = Perturbation.objects.filter(batch_id=batch)
    assert added.count() == rows == 245
    # Validators start on the new items: one resolves, and their agreement counts move.
    item = added.first().item
    vote_all(item, validators, ["negative", "negative", "negative", "positive", "positive"])
    assert snapshot(project)["counters"] != before["counters"]
    new_items = ValidationItem.objects.filter(
        Q(perturbation__batch_id=batch) | Q(control__batch_id=batch)
    ).count()
    controls = ValidationItem.objects.filter(control__batch_id=batch).count()
    assert 0 < controls < new_items  # both kinds of item go

    # The old route took a batch's id where its GET takes a job's: it now says where to go.
    moved = admin.delete(f"/api/projects/{project.slug}/imports/{batch}/")
    assert moved.status_code == 308 and Perturbation.objects.filter(batch_id=batch).exists()
    assert moved["Location"] == f"/api/projects/{project.slug}/batches/{batch}/"
    response = admin.delete(moved["Location"])
    assert response.status_code == 200, response.json()
    assert response.json() == {
        "originals": rows,
        "perturbations": rows,
        "items": new_items,
        "controls": controls,
        "votes": 5,
        "kept": {},
    }
    assert snapshot(project) == before
    assert release_bytes(released) == release_sha
    assert admin.get(f"/api/releases/{released.pk}/download/").status_code == 200
    entry = AuditLog.objects.get(action="import_undone")
    assert (entry.actor, entry.details["originals"], entry.details["votes"]) == (
        people["admin"],
        rows,
        5,
    )


def walk(client, url: str) -> list[int]:  # type: ignore[no-untyped-def]
    """Every id of a listing, page after page (keyset: each page names the next)."""
    ids: list[int] = []
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.json()
        body = response.json()
        ids += [row["id"] for row in body["results"]]
        url = body["next"]
    return ids


@pytest.fixture
def mixed(project, people):  # type: ignore[no-untyped-def]
    """Perturbations of two authors with every combination this test filters on."""
    other = member(project, "otto", "expert")
    made = []
    for n in range(9):
        author = people["expert"] if n % 2 else other
        pivot = ExampleFactory(
            project=project,
            external_id=f"m{n}",
            split=("test", "dev")[n % 3 == 0],
            fields={"text": f"Review {n}: the film was good."},
        )
        tag = "negation" if n % 3 else "intensity"
        made.append(submitted_perturbation(project, author, pivot=pivot, tag=tag))
    Perturbation.objects.filter(pk__in=[p.pk for p in made[:3]]).update(status="accepted")
    return made


@pytest.mark.parametrize(
    "query, keep",
    [
        ("", lambda p: True),
        ("status=accepted", lambda p: p.status == "accepted"),
        ("split=dev", lambda p: p.pivot.split == "dev"),
        ("tag=intensity", lambda p: p.tags.filter(name="intensity").exists()),
        ("author=otto", lambda p: p.author.username == "otto"),
        ("q=Review 4:", lambda p: "Review 4:" in p.fields["text"]),
        ("q=m7", lambda p: p.pivot.external_id == "m7"),
        # Through the trigram index on PostgreSQL: any case; a quote is searched as typed.
        ("q=rEVIEW 4:", lambda p: "review 4:" in p.fields["text"].lower()),
        ('q=4: the "film', lambda p: '4: the "film' in p.fields["text"]),
        (
            "status=submitted&tag=negation",
            lambda p: p.status == "submitted" and p.tags.filter(name="negation").exists(),
        ),
    ],
)
@pytest.mark.parametrize("order", ["newest", "oldest"])
def test_filters_and_keyset_pages_list_each_match_once_in_order(
    project, people, mixed, client_for, query, keep, order
):
    rows = [p for p in Perturbation.objects.filter(project=project) if keep(p)]
    expected = sorted((p.pk for p in rows), reverse=order == "newest")
    url = f"/api/projects/{project.slug}/items/?size=2&order={order}&{query}"
    assert walk(client_for(people["admin"]), url) == expected


@pytest.mark.parametrize("window", [1, 2, 3])
@pytest.mark.parametrize("kind", ["perturbations", "originals"])
@pytest.mark.parametrize("order", ["newest", "oldest"])
def test_a_search_read_window_by_window_lists_each_match_once_in_order(
    project, people, client_for, monkeypatch, window, kind, order
):
    """A text search reads the ids nearest its start first, then the rest
    (selectors.SEARCH_WINDOW): with windows of a few ids and pages of 2, pages cross windows,
    and some windows hold no match."""
    from annotation.data import selectors

    monkeypatch.setattr(selectors, "SEARCH_WINDOW", window)
    texts = ["a needle here", "hay", "hay", "hay", "hay", "hay", "hay", "NEEDLE", "hay",
             "needles", "hay", "hay", "hay", "hay", "a needle", "hay", "the needle"]  # fmt: skip
    for n, text in enumerate(texts):
        pivot = ExampleFactory(project=project, external_id=f"w{n}", fields={"text": text})
        submitted_perturbation(project, people["expert"], pivot=pivot, text=f"{text} too")
    model = Perturbation if kind == "perturbations" else Example
    rows = model.objects.filter(project=project)
    expected = sorted(
        (r.pk for r in rows if "needle" in r.fields["text"].lower()), reverse=order == "newest"
    )
    assert len(expected) == 5
    url = f"/api/projects/{project.slug}/items/?kind={kind}&size=2&order={order}&q=neEdle"
    assert walk(client_for(people["admin"]), url) == expected


def test_originals_list_filters_by_import_and_waiting(project, people, client_for):
    admin = client_for(people["admin"])
    content = b"".join(
        json.dumps({"id": i, "text": t, "label": label}).encode() + b"\n"
        for i, t, label in (("a", "One.", "positive"), ("b", "Two.", "negative"))
    )
    response = admin.post(
        f"/api/projects/{project.slug}/examples/import/",
        {"file": SimpleUploadedFile("two.jsonl", content)},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    batch = response.json()["batch"]
    ExampleFactory(project=project, external_id="elsewhere")
    mine = sorted(Example.objects.filter(external_id__in=["a", "b"]).values_list("pk", flat=True))
    url = f"/api/projects/{project.slug}/items/?kind=originals&order=oldest&batch={batch}"
    assert walk(admin, url) == mine


def test_a_page_of_an_imports_rows_reads_its_warnings_once_at_most(project, people, client_for):
    """A large import's warnings (megabytes) are not read with each of its rows: the Data page
    of 50 rows of one import read them 50 times."""
    admin = client_for(people["admin"])
    assert import_cad_dev(admin, project).status_code == 201
    batch = ImportBatch.objects.get(project=project)
    warnings = [{"line": n, "message": "a long warning " * 20} for n in range(2000)]
    ImportBatch.objects.filter(pk=batch.pk).update(warnings=warnings, skipped=warnings)
    browser = Client()
    browser.force_login(people["admin"])
    pages = [
        (admin, f"/api/projects/{project.slug}/items/?kind={kind}&batch={batch.pk}")
        for kind in ("originals", "perturbations")
    ]
    pages += [
        (browser, f"/p/{project.slug}/data/?kind={kind}&q=the")
        for kind in ("originals", "perturbations")
    ]
    for client, url in pages:
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        assert response.status_code == 200
        read = [q["sql"] for q in queries if '"annotation_importbatch"."warnings"' in q["sql"]]
        assert read == [], url
    rows = admin.get(pages[1][1]).json()["results"]
    assert len(rows) > 1 and {row["batch"] for row in rows} == {batch.pk}
    one = browser.get(f"/p/{project.slug}/data/perturbations/{rows[0]['id']}/")
    assert one.status_code == 200 and batch.source_name in one.content.decode()


@pytest.mark.parametrize(
    "query, field",
    [
        ("kind=votes", "kind"),
        ("status=maybe", "status"),
        ("split=val", "split"),
        ("batch=x", "batch"),
        ("after=-3", "after"),
        ("order=random", "order"),
        ("batch=99999999999999999999", "batch"),
    ],
)
def test_a_bad_filter_is_named_not_an_empty_list(project, people, client_for, query, field):
    response = client_for(people["admin"]).get(f"/api/projects/{project.slug}/items/?{query}")
    assert response.status_code == 400
    assert response.json()["field"] == field, response.json()


def test_experts_see_only_their_own_and_others_nothing(project, people, mixed, client_for):
    url = f"/api/projects/{project.slug}/items/"
    own = sorted((p.pk for p in mixed if p.author == people["expert"]), reverse=True)
    assert walk(client_for(people["expert"]), url) == own
    other = next(p for p in mixed if p.author != people["expert"])
    assert client_for(people["expert"]).get(f"{url}{other.pk}/").status_code == 404
    assert client_for(people["validator"]).get(url).status_code == 403
    assert client_for(people["outsider"]).get(url).status_code == 404
    assert client_for().get(url).status_code in (401, 403)
    bulk = {"action": "delete", "ids": [other.pk]}
    assert client_for(people["expert"]).post(f"{url}bulk/", bulk, format="json").status_code == 403
    assert (
        client_for(people["outsider"]).post(f"{url}bulk/", bulk, format="json").status_code == 404
    )
    assert Perturbation.objects.filter(pk=other.pk).exists()


def test_a_rows_history_has_its_votes_with_validator_and_time(
    project, people, validators, client_for
):
    p = submitted_perturbation(project, people["expert"])
    vote_all(p.item, validators, ["negative"] * 3 + ["positive"] * 2)
    body = client_for(people["admin"]).get(f"/api/projects/{project.slug}/items/{p.pk}/").json()
    votes = [e for e in body["history"] if e["what"] == "voted"]
    assert sorted(e["who"] for e in votes) == [v.username for v in validators]
    assert Counter(e["detail"] for e in votes) == {"negative": 3, "positive": 2}
    whats = [e["what"] for e in body["history"]]
    assert whats.index("submitted") < whats.index("voted") < whats.index("resolved")
    assert body["record"]["status"] == "accepted" and body["record"]["votes"] == {
        "negative": 3,
        "positive": 2,
    }


def test_undo_is_refused_while_a_release_holds_the_import(
    project, people, client_for, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    admin = client_for(people["admin"])
    line = {
        "original": {"id": "r1", "fields": {"text": "A good film."}, "label": "positive"},
        "perturbations": [
            {"fields": {"text": "A bad film."}, "label": "negative", "tags": ["negation"]}
        ],
    }
    response = admin.post(
        f"/api/projects/{project.slug}/import/sets/",
        {
            "format": "sets_jsonl",
            "accept": "true",
            "file": SimpleUploadedFile("s.jsonl", json.dumps(line).encode()),
        },
        format="multipart",
    )
    batch = response.json()["batch"]
    assert (
        admin.post(f"/api/projects/{project.slug}/releases/", {"version": "1.0"}).status_code == 201
    )
    before = snapshot(project)
    response = admin.delete(f"/api/projects/{project.slug}/batches/{batch}/")
    assert response.status_code == 409
    assert "release 1.0" in response.json()["detail"]
    assert snapshot(project) == before


def test_deleting_released_rows_keeps_them_and_says_so(project, people, released, client_for):
    sha = release_bytes(released)
    ids = list(released.perturbations.values_list("pk", flat=True))
    loose = submitted_perturbation(project, people["expert"])
    response = client_for(people["admin"]).post(
        f"/api/projects/{project.slug}/items/bulk/",
        {"action": "delete", "ids": [*ids, loose.pk]},
        format="json",
    )
    assert response.status_code == 200, response.json()
    assert response.json()["done"] == 1
    assert response.json()["details"]["kept"] == {"1.0": len(ids)}
    assert set(released.perturbations.values_list("pk", flat=True)) == set(ids)
    assert not Perturbation.objects.filter(pk=loose.pk).exists()
    assert release_bytes(released) == sha


def independent_counters(project: Project) -> list[tuple[str, int, int]]:
    """Each validator's votes on resolved items, and those that match the majority, recounted
    from the votes that remain (the rule of docs/validation.md, written here)."""
    resolved: Counter[str] = Counter()
    agreed: Counter[str] = Counter()
    votes = Vote.objects.filter(item__project=project, item__status="resolved")
    for vote in votes.select_related("item", "validator"):
        resolved[vote.validator.username] += 1
        agreed[vote.validator.username] += vote.label == vote.item.majority_label
    return sorted((v, resolved[v], agreed[v]) for v in resolved)


# The voters' counts are taken once the vote commits (transaction.on_commit).
@pytest.mark.django_db(transaction=True)
def test_deleting_voted_rows_takes_their_votes_out_of_agreement(
    project, people, validators, client_for
):
    made = [submitted_perturbation(project, people["expert"]) for _ in range(3)]
    for p, labels in zip(
        made,
        (["negative"] * 5, ["negative"] * 3 + ["positive"] * 2, ["positive"] * 4 + ["negative"]),
        strict=True,
    ):
        vote_all(p.item, validators, labels)
    response = client_for(people["admin"]).post(
        f"/api/projects/{project.slug}/items/bulk/",
        {"action": "delete", "ids": [made[1].pk]},
        format="json",
    )
    assert response.status_code == 200
    stored = ValidatorStatus.objects.filter(project=project, resolved_votes__gt=0)
    assert sorted(stored.values_list("validator__username", "resolved_votes", "agreed_votes")) == (
        independent_counters(project)
    )
    assert Vote.objects.filter(item__project=project).count() == 10


# The voters' counts are taken once the vote commits (transaction.on_commit).
@pytest.mark.django_db(transaction=True)
def test_send_back_with_votes_cleared_or_kept(project, people, validators, client_for):
    a, b = (submitted_perturbation(project, people["expert"]) for _ in range(2))
    for p in (a, b):
        vote_all(p.item, validators, ["negative"] * 3 + ["positive"] * 2)
    url = f"/api/projects/{project.slug}/items/bulk/"
    admin = client_for(people["admin"])
    response = admin.post(
        url, {"action": "send_back", "ids": [a.pk], "clear_votes": True}, format="json"
    )
    assert response.json()["done"] == 1
    response = admin.post(url, {"action": "send_back", "ids": [b.pk]}, format="json")
    a.item.refresh_from_db()
    b.item.refresh_from_db()
    assert (a.item.status, a.item.counted_votes, a.item.votes.count()) == ("open", 0, 0)
    assert (b.item.status, b.item.counted_votes, b.item.extra_votes) == ("open", 5, 2)
    assert Perturbation.objects.get(pk=a.pk).status == "submitted"
    stored = ValidatorStatus.objects.filter(project=project, resolved_votes__gt=0)
    assert list(stored) == [] and independent_counters(project) == []


def test_accept_and_reject_need_a_reason_and_are_logged(project, people, client_for):
    p = submitted_perturbation(project, people["expert"])
    url = f"/api/projects/{project.slug}/items/bulk/"
    admin = client_for(people["admin"])
    response = admin.post(url, {"action": "accept", "ids": [p.pk]}, format="json")
    assert response.status_code == 400 and response.json()["field"] == "reason"
    response = admin.post(
        url, {"action": "accept", "ids": [p.pk], "reason": "checked by hand"}, format="json"
    )
    assert response.json()["done"] == 1
    p.refresh_from_db()
    p.item.refresh_from_db()
    assert (p.status, p.item.status) == ("accepted", "closed")
    entry = AuditLog.objects.get(action="bulk_accept")
    assert (entry.details["reason"], entry.details["ids"]) == ("checked by hand", [p.pk])
    history = admin.get(f"/api/projects/{project.slug}/items/{p.pk}/").json()["history"]
    assert any(e["what"] == "accept" and "checked by hand" in e["detail"] for e in history)


def test_tags_are_added_and_removed_in_bulk(project, people, client_for):
    made = [submitted_perturbation(project, people["expert"]) for _ in range(3)]
    url = f"/api/projects/{project.slug}/items/bulk/"
    admin = client_for(people["admin"])
    ids = [p.pk for p in made]
    response = admin.post(url, {"action": "tag", "ids": ids, "tag": "intensity"}, format="json")
    assert response.json()["done"] == 3
    tagged = Perturbation.objects.filter(tags__name="intensity").values_list("pk", flat=True)
    assert sorted(tagged) == sorted(ids)
    response = admin.post(
        url, {"action": "untag", "ids": ids[:1], "tag": "intensity"}, format="json"
    )
    assert response.json()["done"] == 1
    assert sorted(
        Perturbation.objects.filter(tags__name="intensity").values_list("pk", flat=True)
    ) == sorted(ids[1:])
    response = admin.post(url, {"action": "tag", "ids": ids, "tag": "nope"}, format="json")
    assert response.status_code == 400 and response.json()["field"] == "tag"


def test_a_project_is_deleted_once_its_slug_is_typed(project, people, client_for):
    submitted_perturbation(project, people["expert"])
    admin = client_for(people["admin"])
    assert admin.delete(f"/api/projects/{project.slug}/").status_code == 400
    assert admin.delete(f"/api/projects/{project.slug}/?confirm=other").status_code == 400
    assert (
        client_for(people["expert"])
        .delete(f"/api/projects/{project.slug}/?confirm={project.slug}")
        .status_code
        == 403
    )
    assert admin.delete(f"/api/projects/{project.slug}/?confirm={project.slug}").status_code == 204
    assert not Project.objects.filter(slug="sentiment").exists()
    assert (
        not Example.objects.exists() or not Example.objects.filter(project_id=project.pk).exists()
    )
    entry = AuditLog.objects.get(action="project_deleted")
    assert (entry.details["slug"], entry.details["perturbations"]) == ("sentiment", 1)


def test_a_project_with_releases_is_kept(project, people, released, client_for):
    response = client_for(people["admin"]).delete(
        f"/api/projects/{project.slug}/?confirm=sentiment"
    )
    assert response.status_code == 409 and "1.0" in response.json()["detail"]
    assert Project.objects.filter(pk=project.pk).exists()


def test_audit_log_lists_what_was_done(project, people, client_for):
    p = submitted_perturbation(project, people["expert"])
    admin = client_for(people["admin"])
    admin.post(
        f"/api/projects/{project.slug}/items/bulk/",
        {"action": "delete", "ids": [p.pk]},
        format="json",
    )
    body = admin.get(f"/api/projects/{project.slug}/audit/").json()
    first = body["results"][0]
    assert (first["actor"], first["action"], first["details"]["perturbations"]) == (
        "alice",
        "items_deleted",
        1,
    )
    assert (
        client_for(people["expert"]).get(f"/api/projects/{project.slug}/audit/").status_code == 403
    )


def test_only_admins_undo_an_import(project, people, client_for):
    content = json.dumps({"id": "a", "text": "One.", "label": "positive"}).encode()
    admin = client_for(people["admin"])
    response = admin.post(
        f"/api/projects/{project.slug}/examples/import/",
        {"file": SimpleUploadedFile("one.jsonl", content)},
        format="multipart",
    )
    url = f"/api/projects/{project.slug}/batches/{response.json()['batch']}/"
    assert client_for().delete(url).status_code == 401
    assert client_for(people["outsider"]).delete(url).status_code == 404
    for role in ("validator", "expert"):
        assert client_for(people[role]).delete(url).status_code == 403
    assert Example.objects.filter(project=project).count() == 1
    assert admin.delete(url).json()["originals"] == 1
    assert admin.delete(url).status_code == 404


def test_an_experts_edit_of_an_imported_original_goes_with_its_import(project, people, client_for):
    admin = client_for(people["admin"])
    content = json.dumps({"id": "a", "text": "A good film.", "label": "positive"}).encode()
    response = admin.post(
        f"/api/projects/{project.slug}/examples/import/",
        {"file": SimpleUploadedFile("one.jsonl", content)},
        format="multipart",
    )
    batch = response.json()["batch"]
    edit = submitted_perturbation(
        project, people["expert"], pivot=Example.objects.get(external_id="a")
    )
    other = submitted_perturbation(project, people["expert"])
    assert walk(admin, f"/api/projects/{project.slug}/items/?batch={batch}") == [edit.pk]
    body = admin.delete(f"/api/projects/{project.slug}/batches/{batch}/").json()
    assert (body["originals"], body["perturbations"]) == (1, 1)
    assert list(Perturbation.objects.values_list("pk", flat=True)) == [other.pk]


def test_a_count_that_runs_out_of_time_says_at_least_the_page(project, people):
    """A rare combination of filters reads every row to be counted; past COUNT_MS the page
    says "50+" rather than keep the request waiting (PostgreSQL cancels the count)."""
    from annotation.data import selectors

    for _ in range(3):
        submitted_perturbation(project, people["expert"])
    filters = selectors.Filters()
    slow = Perturbation.objects.filter(project=project).extra(where=["pg_sleep(0.1) IS NOT NULL"])
    page = selectors.page_of(Perturbation.objects.filter(project=project), filters, None, 2)
    assert selectors.count_upto(slow, filters, page) == (2, True)
    fast = Perturbation.objects.filter(project=project)
    assert selectors.count_upto(fast, filters, page) == (3, False)
    assert Perturbation.objects.count() == 3  # the connection still works after the cancel


def test_a_bad_filter_on_the_page_says_which_and_a_kind_that_is_none_is_404(project, people):
    from django.test import Client

    client = Client()
    client.force_login(people["admin"])
    page = client.get(f"/p/{project.slug}/data/?status=maybe")
    assert page.status_code == 400
    assert "status is one of draft" in page.content.decode()
    assert 'id="clear-filters"' in page.content.decode()
    p = submitted_perturbation(project, people["expert"])
    assert client.get(f"/p/{project.slug}/data/votes/{p.pk}/").status_code == 404
    assert client.get(f"/p/{project.slug}/data/perturbations/{p.pk}/").status_code == 200


def test_the_audit_page_reads_an_undo_and_a_delete(project, people, client_for):
    """Their detail "items" was read as the dict's method: the page answered 500."""
    from django.test import Client

    p = submitted_perturbation(project, people["expert"])
    bulk = f"/api/projects/{project.slug}/items/bulk/"
    client_for(people["admin"]).post(bulk, {"action": "delete", "ids": [p.pk]}, format="json")
    page = Client()
    page.force_login(people["admin"])
    answer = page.get(f"/p/{project.slug}/audit/")
    assert answer.status_code == 200
    assert "items_deleted" in answer.content.decode() and "items: 1" in answer.content.decode()


@pytest.mark.parametrize(
    "query, field",
    [("batch=999", "batch"), ("label=neutral", "label"), ("author=nobody", "author")],
)
def test_a_filter_that_names_nothing_of_the_project_says_so(
    project, people, client_for, query, field
):
    submitted_perturbation(project, people["expert"])
    answer = client_for(people["admin"]).get(f"/api/projects/{project.slug}/items/?{query}")
    assert answer.status_code == 400 and answer.json()["field"] == field, answer.json()


def test_an_expert_sees_that_their_edit_was_voted_on_not_by_whom(
    project, people, validators, client_for
):
    p = submitted_perturbation(project, people["expert"])
    vote_all(p.item, validators, ["negative"] * 5)
    url = f"/api/projects/{project.slug}/items/{p.pk}/"
    theirs = client_for(people["expert"]).get(url).json()["history"]
    admins = client_for(people["admin"]).get(url).json()["history"]
    assert [e["who"] for e in theirs if e["what"] == "voted"] == ["a validator"] * 5
    assert sorted(e["who"] for e in admins if e["what"] == "voted") == [
        v.username for v in validators
    ]


def test_the_exported_selection_has_a_column_per_field_newest_first(project, people):
    import csv
    import io

    from django.test import Client

    made = [submitted_perturbation(project, people["expert"]) for _ in range(2)]
    page = Client()
    page.force_login(people["admin"])
    answer = page.post(f"/p/{project.slug}/data/bulk/", {
        "action": "export", "format": "csv", "kind": "perturbations", "ids": [p.pk for p in made],
    })  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(b"".join(answer.streaming_content).decode())))
    assert [int(r["id"]) for r in rows] == sorted((p.pk for p in made), reverse=True)
    assert [r["text"] for r in rows] == [p.fields["text"] for p in reversed(made)]
    assert rows[0]["tags"] == "negation"


def test_a_selection_held_whole_by_a_release_offers_nothing_to_delete(project, people, released):
    from django.test import Client

    page = Client()
    page.force_login(people["admin"])
    held = released.perturbations.first()
    answer = page.post(f"/p/{project.slug}/data/bulk/", {
        "action": "delete", "kind": "perturbations", "ids": [held.pk],
    }).content.decode()  # fmt: skip
    assert "Nothing to delete" in answer and "1 perturbation in release 1.0" in answer
    row = page.get(f"/p/{project.slug}/data/perturbations/{held.pk}/").content.decode()
    assert 'id="kept-for-releases"' in row and 'id="delete-row"' not in row
    settings = page.get(f"/p/{project.slug}/settings/").content.decode()
    assert 'id="project-kept"' in settings and "Delete project</button>" not in settings


def test_a_history_tells_the_validators_outcome_and_an_imported_acceptance(
    project, people, validators, client_for
):
    """A disputed row reads "so disputed" and then the admin's decision, not "so accepted";
    an edit imported as accepted says so instead of "submitted"."""
    admin = client_for(people["admin"])
    p = submitted_perturbation(project, people["expert"])  # meant negative
    vote_all(p.item, validators, ["positive"] * 3 + ["negative"] * 2)
    url = f"/api/projects/{project.slug}/adjudicate/{p.pk}/"
    assert admin.post(url, {"decision": "accept"}, format="json").status_code == 200
    history = admin.get(f"/api/projects/{project.slug}/items/{p.pk}/").json()["history"]
    resolved = next(e for e in history if e["what"] == "resolved")
    assert resolved["detail"] == "majority positive, so disputed"
    assert [e["what"] for e in history][-1] == "adjudicated"

    line = {"set_id": "s-1",
            "original": {"id": "ex-1", "fields": {"text": "A good film."}, "label": "positive"},
            "perturbations": [{"fields": {"text": "A bad film."}, "label": "negative",
                               "tags": ["negation"]}]}  # fmt: skip
    upload = SimpleUploadedFile("sets.jsonl", json.dumps(line).encode())
    url = f"/api/projects/{project.slug}/import/sets/"
    response = admin.post(url, {"format": "sets_jsonl", "file": upload, "accept": "true"})
    assert response.status_code == 201, response.json()
    imported = Perturbation.objects.get(external_id="", pivot__external_id="ex-1")
    history = admin.get(f"/api/projects/{project.slug}/items/{imported.pk}/").json()["history"]
    assert [e["what"] for e in history] == ["imported"]
    assert history[0]["detail"].endswith("accepted as imported, without validation")


def test_a_search_finds_an_original_by_its_id_and_others_by_their_text(project, people, client_for):
    """On PostgreSQL an id of three characters or more is found beside the texts that hold it
    (the ids first, then the trigram index): both kinds of match, and only they."""
    by_id = ExampleFactory(project=project, external_id="abc-9", fields={"text": "Nothing."})
    by_text = ExampleFactory(project=project, fields={"text": "See ABC-9 here."})
    ExampleFactory(project=project, fields={"text": "abc 9, not it."})
    admin = client_for(people["admin"])
    url = f"/api/projects/{project.slug}/items/?kind=originals&order=oldest&q="
    assert walk(admin, url + "abc-9") == [by_id.pk, by_text.pk]
    assert walk(admin, url + "ABC-9") == [by_text.pk]  # an id is exact, a text in any case
