import json

import pytest

from annotation.models import ValidationItem
from annotation.validation.stats import project_stats
from tests.factories import import_votes

pytestmark = pytest.mark.django_db


def test_imported_responses_get_majorities_and_statistics(project, people, client_for):
    lines = [
        {"id": "x1", "fields": {"text": "Fine."}, "label_distribution": {
            "positive": ["w1", "w2", "w3"], "negative": ["w4"], "mixed": ["w5"]}},
        {"id": "x2", "fields": {"text": "Meh."}, "label_distribution": {
            "positive": ["w1", "w2"], "negative": ["w3", "w4"], "mixed": ["w5"]}},
    ]  # fmt: skip
    response = import_votes(client_for(people["admin"]), project, lines)
    assert response.status_code == 201 and response.json() == {"imported": 2, "already_present": 0}
    items = {i.external_id: i for i in ValidationItem.objects.filter(project=project)}
    assert items["x1"].majority_label == "positive" and items["x2"].majority_label == ""
    stats = client_for(people["admin"]).get(f"/api/projects/{project.slug}/stats/").json()
    assert stats["per_split"]["test"]["items"] == 2
    assert stats["fleiss_kappa"] is not None
    # The answer's serializer (the schema's shape) leaves out nothing the Dashboard shows.
    # (and says which of the schema's two shapes it is).
    assert stats.pop("shape") == "labels"
    assert stats == json.loads(json.dumps(project_stats(project)))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            {"id": "a", "fields": {"text": "x"}, "label_distribution": {"great": ["w1", "w2"]}},
            "unknown label 'great'",
        ),
        (
            {"id": "a", "fields": {"text": "x"}, "label_distribution": {"positive": ["w1"]}},
            "at least two responses",
        ),
        (
            {"id": "a", "fields": {"body": "x"}, "label_distribution": {"positive": ["w1", "w2"]}},
            "missing field 'text'",
        ),
        (
            {
                "id": "a",
                "fields": {"text": "x"},
                "label_distribution": {"positive": ["w1"], "negative": ["w1"]},
            },
            "answers twice",
        ),
        ({"fields": {"text": "x"}, "label_distribution": {"positive": ["w1", "w2"]}}, "missing id"),
    ],
)
def test_bad_vote_import_is_rejected_with_line_and_imports_nothing(
    project, people, client_for, line, message
):
    good = {"id": "ok", "fields": {"text": "y"}, "label_distribution": {"positive": ["w1", "w2"]}}
    response = import_votes(client_for(people["admin"]), project, [good, line])
    assert response.status_code == 400
    assert response.json()["errors"][0]["line"] == 2
    assert message in response.json()["errors"][0]["message"]
    assert not ValidationItem.objects.filter(project=project).exists()


def test_imported_text_and_ids_survive_exactly(project, people, client_for):
    """Import writes with PostgreSQL's COPY: tabs, newlines, backslashes and quotes in texts
    and worker ids must come back as they were sent, and counts must match."""
    text = 'Tab\there, "quoted", back\\slash\\N, new\nline, \\t literal, and ünïcode ✓.'
    workers = {"positive": ["w\\1", "w\t2", "w3"], "negative": ["w4"]}
    line = {"id": "odd\\id", "fields": {"text": text}, "label_distribution": workers}
    response = import_votes(client_for(people["admin"]), project, [line])
    assert response.status_code == 201, response.json()
    item = ValidationItem.objects.get(project=project)
    assert (item.external_id, item.fields) == ("odd\\id", {"text": text})
    assert item.majority_label == "positive"
    usernames = sorted(v.validator.username for v in item.votes.all())
    slug = project.slug
    assert usernames == sorted(f"ext-{slug}-{w}" for w in ["w\\1", "w\t2", "w3", "w4"])
    assert item.counted_votes == 4 == item.votes.count()
    assert not any(v.validator.is_active or v.validator.has_usable_password()
                   for v in item.votes.all())  # fmt: skip


def reltuples(model) -> float:  # type: ignore[no-untyped-def]
    """The row count the planner believes in: ANALYZE sets it (exactly, on a small table)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [model._meta.db_table]
        )
        return float(cursor.fetchone()[0])


def test_an_import_analyses_the_tables_it_filled(project, people, client_for):
    """Nothing analysed the tables an import filled: a server whose autovacuum had not run
    planned the validation queue blind (8 votes/s after a bulk import, 259 after ANALYZE)."""
    from annotation.models import Vote

    lines = [
        {"id": f"a{n}", "fields": {"text": f"Text {n}."},
         "label_distribution": {"positive": ["w1", "w2"], "negative": ["w3"]}}
        for n in range(4)
    ]  # fmt: skip
    assert import_votes(client_for(people["admin"]), project, lines).status_code == 201
    assert reltuples(Vote) == Vote.objects.count() == 12
    assert reltuples(ValidationItem) == ValidationItem.objects.count() == 4


def test_a_vote_file_past_the_row_limit_is_refused_with_its_line(
    project, people, client_for, settings
):
    settings.IMPORT_MAX_ROWS = 3
    lines = [
        {"id": f"a{n}", "fields": {"text": "t"}, "label_distribution": {"positive": ["w1", "w2"]}}
        for n in range(5)
    ]
    response = import_votes(client_for(people["admin"]), project, lines)
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"line": 4, "message": "more than 3 rows; that is the limit."}
    ]
    assert not ValidationItem.objects.exists()


def test_the_same_vote_file_twice_adds_nothing_and_says_so(project, people, client_for):
    """Idempotent: 200 with the count already present; a changed item is an error on its line,
    and then nothing of the file is imported."""
    from annotation.models import Vote

    admin = client_for(people["admin"])
    lines = [
        {"id": f"a{n}", "fields": {"text": f"Text {n}."},
         "label_distribution": {"positive": ["w1", "w2"], "negative": ["w3"]}}
        for n in range(3)
    ]  # fmt: skip
    first = import_votes(admin, project, lines)
    assert (first.status_code, first.json()) == (201, {"imported": 3, "already_present": 0})
    again = import_votes(admin, project, lines)
    assert (again.status_code, again.json()) == (200, {"imported": 0, "already_present": 3})
    more = import_votes(admin, project, [*lines, {**lines[0], "id": "a9"}])
    assert (more.status_code, more.json()) == (201, {"imported": 1, "already_present": 3})
    changed = {**lines[1], "label_distribution": {"positive": ["w1", "w2", "w3"]}}
    refused = import_votes(admin, project, [lines[0], changed, {**lines[0], "id": "b1"}])
    assert refused.status_code == 400
    assert refused.json()["errors"] == [
        {"line": 2, "message": "id 'a1' was imported before with other fields, split or votes."}
    ]
    assert ValidationItem.objects.filter(project=project).count() == 4
    assert Vote.objects.filter(item__project=project).count() == 12


def test_the_vote_import_page_imports_once_and_shows_errors_by_line(project, people):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client

    page = Client()
    page.force_login(people["admin"])
    url = f"/p/{project.slug}/import/votes/"
    shown = page.get(url).content.decode()
    assert "label_distribution" in shown and "negative" in shown  # the format, by example
    lines = [{"id": f"a{n}", "fields": {"text": f"T {n}"},
              "label_distribution": {"positive": ["w1", "w2"]}} for n in range(2)]  # fmt: skip
    content = "\n".join(json.dumps(line) for line in lines).encode()
    for said in ("Imported 2 items from v.jsonl.", "Imported 0 items from v.jsonl; 2 were"):
        answer = page.post(url, {"file": SimpleUploadedFile("v.jsonl", content)}, follow=True)
        assert said in answer.content.decode()
    bad = content + b'\n{"id": "x", "fields": {"text": "t"}, "label_distribution": {"meh": ["w"]}}'
    refused = page.post(url, {"file": SimpleUploadedFile("v.jsonl", bad)})
    html = refused.content.decode()
    assert refused.status_code == 400 and 'id="import-errors"' in html
    assert "unknown label &#x27;meh&#x27;" in html
    assert ValidationItem.objects.filter(project=project).count() == 2
