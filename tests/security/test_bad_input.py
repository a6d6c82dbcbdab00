"""Every bad input of the hostile-user audit gets a clear 4xx, and nothing is written."""

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation.models import AuditLog, Claim, Example, Perturbation, ValidationItem, Vote
from tests.factories import ExampleFactory, member, submitted_perturbation

pytestmark = pytest.mark.django_db

NESTED = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def admin(people, client_for):  # type: ignore[no-untyped-def]
    return client_for(people["admin"])


@pytest.fixture
def page(people):  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(people["admin"])
    return client


def writes() -> tuple[int, ...]:
    models = (Example, Perturbation, ValidationItem, Vote, Claim, AuditLog)
    return tuple(model.objects.count() for model in models)


def upload(name: str, content: str | bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content.encode() if isinstance(content, str) else content)


def test_nul_characters_anywhere_are_refused(project, people, admin, page):
    before = writes()
    assert admin.get(f"/api/projects/{project.slug}/examples/?search=a%00b").status_code == 400
    assert admin.get(f"/api/projects/{project.slug}%00/").status_code == 400
    assert page.get(f"/p/{project.slug}/pivots/?search=%00").status_code == 400
    body = {"pivot": "a\u0000b", "fields": {"text": "x"}}
    response = admin.post(f"/api/projects/{project.slug}/perturbations/", body, format="json")
    assert response.status_code == 400 and "NUL" in response.json()["detail"]
    url = f"/api/projects/{project.slug}/examples/import/"
    csv_nul = admin.post(url, {"file": upload("a.csv", "text,label\nok\x00,positive\n")})
    assert csv_nul.status_code == 400
    assert csv_nul.json()["errors"] == [
        {"line": 2, "message": "the line holds a NUL character (\\x00)."}
    ]
    jsonl_nul = admin.post(
        url, {"file": upload("a.jsonl", '{"text": "a\\u0000", "label": "positive"}\n')}
    )
    assert jsonl_nul.status_code == 400 and jsonl_nul.json()["errors"][0]["line"] == 1
    mapping = admin.post(
        url, {"file": upload("a.csv", "t,label\nx,positive\n"), "mapping": '{"text": "t\\u0000"}'}
    )
    assert mapping.status_code == 400
    form = page.post(f"/p/{project.slug}/members/", {"username": "a\x00b", "roles": "expert"})
    assert form.status_code == 400
    assert writes() == before


def test_numbers_beyond_the_database_are_refused(project, people, admin, client_for):
    item = submitted_perturbation(project, people["expert"]).item
    before = writes()
    voter = client_for(people["validator"])
    url = f"/api/projects/{project.slug}/validation/{item.pk}/vote/"
    vote = voter.post(url, {"label": "negative", "seconds_spent": 2**31}, format="json")
    assert vote.status_code == 400 and "seconds_spent" in vote.json()
    page = Client()
    page.force_login(people["validator"])
    page.post(
        f"/p/{project.slug}/validate/{item.pk}/vote/",
        {"label": "negative", "seconds_spent": "2147483648"},
    )
    tags = {"tags": [{"name": "negation", "target": 10**12}]}
    assert admin.patch(f"/api/projects/{project.slug}/", tags, format="json").status_code == 400
    model = {"project": project.slug, "name": "m", "kind": "hf-sequence-classification",
             "source": "org/m", "max_length": 10**12}  # fmt: skip
    assert admin.post("/api/models/", model, format="json").status_code == 400
    huge_id = "9" * 5000
    assert admin.get(f"/api/releases/{huge_id}/").status_code == 404
    assert admin.get(f"/api/projects/{project.slug}/perturbations/{huge_id}/").status_code == 404
    assert admin.get(f"/api/releases/{'9' * 19}/").status_code == 404
    assert writes() == before


def test_nan_and_deep_nesting_are_refused(project, admin, page, released):
    before = writes()
    url = f"/api/projects/{project.slug}/examples/import/"
    nan = admin.post(
        url, {"file": upload("a.jsonl", '{"text": "a", "label": "positive", "score": NaN}\n')}
    )
    assert nan.status_code == 400 and "NaN" in nan.json()["errors"][0]["message"]
    deep = admin.post(
        url,
        {"file": upload("a.jsonl", '{"text": "a", "label": "positive", "x": ' + NESTED + "}\n")},
    )
    assert deep.status_code == 400 and "nested" in deep.json()["errors"][0]["message"]
    body = admin.generic(
        "PATCH", f"/api/projects/{project.slug}/", NESTED, content_type="application/json"
    )
    assert body.status_code == 400 and "nested" in body.json()["detail"]
    releases = f"/api/projects/{project.slug}/releases/"
    proportions = {"version": "2", "split_strategy": "random", "proportions": {"test": "NaN"}}
    assert admin.post(releases, proportions, format="json").status_code == 400
    form = page.post(f"/p/{project.slug}/releases/", {
        "version": "2", "split_strategy": "random", "seed": 0, "proportions": '{"test": NaN}',
    })  # fmt: skip
    assert form.status_code == 200 and "not valid JSON" in form.content.decode()
    assert writes() == before and project.releases.count() == 1


def test_overflowing_numbers_and_repeated_keys_are_refused_with_line_and_key(project, admin):
    """1e400 became infinity (a 500 from PostgreSQL); a repeated key kept its last value only
    (a vote line repeating "positive" lost a worker's response)."""
    before = writes()
    examples = f"/api/projects/{project.slug}/examples/import/"
    lines = '{"text": "a", "label": "positive"}\n{"text": "b", "label": "negative", "x": 1e400}\n'
    huge = admin.post(examples, {"file": upload("a.jsonl", lines)})
    assert huge.status_code == 400
    assert huge.json()["errors"] == [
        {"line": 2, "message": "invalid JSON: the number 1e400 is too large."}
    ]
    votes = f"/api/projects/{project.slug}/import/votes/"
    line = (
        '{"id": "r1", "fields": {"text": "t"}, '
        '"label_distribution": {"positive": ["w1"], "negative": ["w2"], "positive": ["w3"]}}\n'
    )
    repeated = admin.post(votes, {"file": upload("v.jsonl", line)})
    assert repeated.status_code == 400
    assert repeated.json()["errors"] == [
        {"line": 1, "message": "invalid JSON: the key 'positive' appears twice in one object."}
    ]
    body = '{"name": "A", "name": "B"}'
    patch = admin.generic(
        "PATCH", f"/api/projects/{project.slug}/", body, content_type="application/json"
    )
    assert patch.status_code == 400 and "'name' appears twice" in patch.json()["detail"]
    assert writes() == before
    project.refresh_from_db()
    assert project.name != "B"


def test_ids_and_worker_names_past_their_columns_are_refused(project, admin):
    before = writes()
    votes = f"/api/projects/{project.slug}/import/votes/"

    def line(item_id: str, workers: list[str]) -> str:
        return json.dumps({"id": item_id, "fields": {"text": "t"},
                           "label_distribution": {"positive": workers}})  # fmt: skip

    long_id = admin.post(votes, {"file": upload("v.jsonl", line("i" * 256, ["a", "b"]))})
    assert (
        long_id.status_code == 400 and "longer than 255" in long_id.json()["errors"][0]["message"]
    )
    prefix = "w" * 160
    twins = admin.post(votes, {"file": upload("v.jsonl", line("x", [prefix + "1", prefix + "2"]))})
    assert twins.status_code == 400 and "worker id" in twins.json()["errors"][0]["message"]
    long_text = {"id": "y", "fields": {"text": "t" * 100_000},
                 "label_distribution": {"positive": ["a", "b"]}}  # fmt: skip
    field = admin.post(votes, {"file": upload("v.jsonl", json.dumps(long_text))})
    assert (
        field.status_code == 400 and "the limit is 20,000" in field.json()["errors"][0]["message"]
    )
    sets = f"/api/projects/{project.slug}/import/sets/"
    perturbation = {"fields": {"text": "A bad film."}, "label": "negative", "tags": ["negation"]}
    original = {"id": "s" * 300, "fields": {"text": "A good film."}, "label": "positive"}
    record = {"original": original, "perturbations": [perturbation]}
    long_set = admin.post(
        sets, {"format": "sets_jsonl", "file": upload("s.jsonl", json.dumps(record))}
    )
    assert (
        long_set.status_code == 400 and "longer than 255" in long_set.json()["errors"][0]["message"]
    )
    assert writes() == before


def test_bad_ids_in_pages_are_not_found(project, people, page, released):
    before = writes()
    assert (
        page.post(f"/p/{project.slug}/validators/999999/qualify/", {"qualified": "0"}).status_code
        == 404
    )
    assert page.get(f"/p/{project.slug}/releases/{released.pk}/?against=abc").status_code == 404
    api = Client()
    api.force_login(people["admin"])
    assert api.get(f"/api/releases/{released.pk}/diff/?against=abc").status_code == 400
    run = page.post(
        f"/p/{project.slug}/evaluations/", {"release": "abc", "model": "1", "split": "test"}
    )
    assert run.status_code == 200 and "Choose a release, and a model" in run.content.decode()
    compare = page.get(f"/p/{project.slug}/evaluations/compare/?a={'9' * 5000}&b=x")
    assert compare.status_code == 200
    assert writes() == before


def test_set_import_page_with_columns_not_in_the_files_writes_nothing(project, page):
    before = writes()
    options = {"format": "paired_tsv", "split": "test", "author": "imported"}
    shown = page.post(f"/p/{project.slug}/import/sets/", {
        **options, "original": upload("o.tsv", "label\ttext\npositive\tGood.\n"),
        "contrast": upload("c.tsv", "label\ttext\nnegative\tBad.\n"),
    })  # fmt: skip
    token = re.search(r'name="upload" value="(\w+)"', shown.content.decode())
    assert token is not None
    for action in ("preview", "import"):
        response = page.post(f"/p/{project.slug}/import/sets/", {
            **options, "upload": token.group(1), "map_text": "Text\u0001", "map_label": "x",
            "action": action,
        })  # fmt: skip
        assert response.status_code in (200, 400) and "lacks" in response.content.decode()
    assert writes() == before


def test_jsonl_lines_end_only_at_newlines(project, admin):
    """U+2028 is a line separator for str.splitlines, but a plain character inside JSON."""
    text = '{"text": "one\u2028two", "label": "positive"}\n{"text": "three", "label": "negative"}\n'
    response = admin.post(
        f"/api/projects/{project.slug}/examples/import/", {"file": upload("a.jsonl", text)}
    )
    assert response.status_code == 201, response.json()
    assert list(Example.objects.order_by("id").values_list("fields__text", flat=True)) == [
        "one\u2028two", "three",
    ]  # fmt: skip


def test_oversize_api_bodies_get_json_and_long_rationales_are_refused(project, people, client_for):
    expert = client_for(people["expert"])
    url = f"/api/projects/{project.slug}/perturbations/"
    big = expert.generic("POST", url, "x" * (6 * 1024 * 1024), content_type="application/json")
    assert big.status_code == 413 and "limit" in big.json()["detail"]
    ExampleFactory(project=project, external_id="p1", label="positive", fields={"text": "Good."})
    payload = {"pivot": "p1", "fields": {"text": "Bad."}, "rationale": "r" * 4_000_000}
    long = expert.post(url, payload, format="json")
    assert long.status_code == 400 and "rationale" in long.json()
    assert not Perturbation.objects.exists()


def test_opening_the_editor_claims_nothing(project, people):
    pivot = ExampleFactory(project=project, label="positive", fields={"text": "Good."})
    page = Client()
    page.force_login(people["expert"])
    response = page.get(f"/p/{project.slug}/pivots/{pivot.pk}/edit/")
    assert response.status_code == 200 and 'id="claim"' in response.content.decode()
    assert not Claim.objects.exists()
    claimed = page.post(f"/p/{project.slug}/pivots/{pivot.pk}/claim/")
    assert claimed.status_code == 302 and Claim.objects.get().expert == people["expert"]
    rival = Client()
    rival.force_login(member(project, "rex", "expert"))
    shown = rival.get(f"/p/{project.slug}/pivots/{pivot.pk}/edit/").content.decode()
    assert "Another expert holds this pivot" in shown and "erin" not in shown


def test_every_api_error_is_json_a_server_error_included(project, people, monkeypatch):
    """During a PostgreSQL restart clients got HTML 500 pages from /api/."""
    from django.db import OperationalError
    from rest_framework.test import APIClient

    from annotation.validation.services import queue

    def database_gone(**_):  # type: ignore[no-untyped-def]
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(queue, "next_item", database_gone)
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(people["validator"])
    failed = client.get(f"/api/projects/{project.slug}/validation/next/")
    assert failed.status_code == 500 and failed["Content-Type"] == "application/json"
    assert "Retry it" in failed.json()["detail"]
    missing = client.get("/api/no-such-endpoint/")
    assert missing.status_code == 404 and missing.json() == {"detail": "Not found."}
    page = Client(raise_request_exception=False)
    assert "text/html" in page.get("/no-such-page/")["Content-Type"]
