import pytest

from annotation.models import ValidationItem
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
    assert response.status_code == 201 and response.json() == {"imported": 2}
    items = {i.external_id: i for i in ValidationItem.objects.filter(project=project)}
    assert items["x1"].majority_label == "positive" and items["x2"].majority_label == ""
    stats = client_for(people["admin"]).get(f"/api/projects/{project.slug}/stats/").json()
    assert stats["per_split"]["test"]["items"] == 2
    assert stats["fleiss_kappa"] is not None


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
