"""Texts shown as their dataset means them (issue 59; the rule in docs/task-types.md): IMDb's
real reviews hold `<br /><br />` between paragraphs, as the IMDb corpus does. Every page that
shows a text shows a line break there, never the tag as text and never markup that runs; the
stored text, the API's `fields` and the exports keep the text as published."""

import csv
import html
import re
from pathlib import Path

import pytest

from annotation.models import Example
from annotation.text.edits import word_diff
from annotation.text.fields import diff_html, field_html, text_html
from tests.factories import ExampleFactory, member, submitted_perturbation, vote_all

BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def imdb_pairs(shared_data: Path, n: int) -> list[tuple[dict[str, str], dict[str, str]]]:
    """The first `n` real IMDb contrast pairs whose reviews both hold a line break, the
    original's within its first 120 characters (so that excerpts hold one too)."""
    folder = shared_data / "imdb-contrast"
    with (folder / "test_original.tsv").open(newline="") as a:
        originals = list(csv.DictReader(a, delimiter="\t"))
    with (folder / "test_contrast.tsv").open(newline="") as b:
        contrasts = list(csv.DictReader(b, delimiter="\t"))
    pairs = [
        (o, c)
        for o, c in zip(originals, contrasts, strict=True)
        if 0 <= o["Text"].find("<br") < 120 and "<br" in c["Text"]
    ]
    return pairs[:n]


def shown(text: str) -> str:
    """A text as a reader should get it, computed here: its parts between line-break tags
    escaped by the standard library, each tag a <br>."""
    return "<br>".join(html.escape(part) for part in BREAK.split(text))


def test_a_real_review_shows_its_line_breaks_and_runs_no_other_markup(shared_data):
    (original, _), *_ = imdb_pairs(shared_data, 1)
    text = original["Text"]
    assert text.count("<br />") >= 2
    assert field_html(text, "text") == field_html(text) == text_html(text) == shown(text)
    assert "&lt;br" not in field_html(text)
    # Anything else stays text: a script, a link, an image, a break's look-alikes.
    hostile = 'a<br/>b<BR>c<br >d<script>alert(1)</script><img src=x onerror=alert(1)><br x="1">'
    assert field_html(hostile) == (
        "a<br>b<br>c<br>d&lt;script&gt;alert(1)&lt;/script&gt;"
        "&lt;img src=x onerror=alert(1)&gt;&lt;br x=&quot;1&quot;&gt;"
    )


def test_a_truncated_excerpt_counts_a_break_as_one_character_and_never_cuts_a_tag():
    assert text_html("One.<br /><br />Two three four", 8) == "One.<br><br>T…"
    assert text_html("<b>x</b>" * 30, 10) == html.escape(("<b>x</b>" * 30)[:9]) + "…"


def test_a_real_edits_diff_shows_breaks_kept_and_marks_breaks_added_or_removed(shared_data):
    (original, contrast), *_ = imdb_pairs(shared_data, 1)
    shown_diff = str(diff_html(word_diff(original["Text"], contrast["Text"])))
    assert "&lt;br" not in shown_diff and "<br>" in shown_diff
    assert "<br" not in re.sub(r"<br>", "", shown_diff)  # no tag half in one part
    assert str(diff_html([("equal", "a<br />"), ("insert", "<br />b"), ("delete", "<br>")])) == (
        "a<br><ins>↵<br>b</ins><del>↵<br></del>"
    )


@pytest.fixture
def imdb_project(project, people, shared_data):  # type: ignore[no-untyped-def]
    """The project with three real IMDb pairs: one edit disputed by five validators, one open
    to validate, one the expert's."""
    project.settings = {**project.settings, "control_rate": 0}
    project.save()
    pairs = imdb_pairs(shared_data, 3)
    crowd = [member(project, f"v{n}", "validator") for n in range(5)]
    edits = []
    for n, (original, contrast) in enumerate(pairs):
        pivot = ExampleFactory(
            project=project,
            external_id=f"imdb-{n}",
            fields={"text": original["Text"]},
            label=original["Sentiment"].lower(),
        )
        edits.append(
            submitted_perturbation(
                project,
                people["expert"],
                pivot=pivot,
                text=contrast["Text"],
                label=contrast["Sentiment"].lower(),
            )
        )
    vote_all(edits[0].item, crowd, [pairs[0][0]["Sentiment"].lower()] * 5)  # the pivot's label
    return project, pairs, edits


def page_of(client, user, url: str) -> str:  # type: ignore[no-untyped-def]
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200, url
    return str(response.content.decode())


def test_every_page_that_shows_a_real_review_shows_its_paragraphs(client, imdb_project, people):
    project, pairs, edits = imdb_project
    slug = project.slug
    pivot = edits[1].pivot
    pages = {
        "pivots": (people["expert"], f"/p/{slug}/pivots/"),
        "my work": (people["expert"], f"/p/{slug}/mine/"),
        "validate": (people["validator"], f"/p/{slug}/validate/"),
        "disputes": (people["admin"], f"/p/{slug}/disputes/"),
        "data": (people["admin"], f"/p/{slug}/data/"),
        "data item": (people["admin"], f"/p/{slug}/data/perturbations/{edits[2].pk}/"),
    }
    for name, (user, url) in pages.items():
        content = page_of(client, user, url)
        assert "&lt;br" not in content, f"{name} shows a line-break tag as text"
        assert "<br>" in content, name
    validate = page_of(client, people["validator"], f"/p/{slug}/validate/")
    assert any(shown(c["Text"]) in validate for _, c in pairs[1:])
    item = page_of(client, people["admin"], f"/p/{slug}/data/perturbations/{edits[2].pk}/")
    assert shown(pairs[2][1]["Text"]) in item
    # The editor: the pivot's side shows it, the box holds the text as stored (the source).
    client.force_login(people["expert"])
    client.post(f"/p/{slug}/pivots/{pivot.pk}/claim/")
    editor = page_of(client, people["expert"], f"/p/{slug}/pivots/{pivot.pk}/edit/")
    assert shown(pivot.fields["text"]) in editor
    assert f">{html.escape(pivot.fields['text'])}</textarea>" in editor


def test_the_stored_text_and_the_apis_fields_keep_the_tags(client_for, imdb_project, people):
    project, pairs, _ = imdb_project
    assert Example.objects.get(external_id="imdb-0").fields["text"] == pairs[0][0]["Text"]
    body = (
        client_for(people["validator"]).get(f"/api/projects/{project.slug}/validation/next/").json()
    )
    raw = body["fields"]["text"]
    assert raw in {c["Text"] for _, c in pairs} and "<br />" in raw
    assert body["fields_html"]["text"] == shown(raw)


def test_the_run_pages_failed_sets_show_a_real_reviews_paragraphs(shared_data):
    from types import SimpleNamespace

    from django.core.paginator import Paginator
    from django.template.loader import render_to_string

    (original, contrast), *_ = imdb_pairs(shared_data, 1)
    diff = word_diff(original["Text"], contrast["Text"])
    p = SimpleNamespace(role="contrast", correct=False, gold="positive", label="negative")
    row = {"p": p, "tags": [], "diff": diff, "images": []}
    context = {"failed_sets": [{"set_id": "imdb-0", "rows": [row]}],
               "failed_page": Paginator([1], 10).page(1), "run": SimpleNamespace(pk=1),
               "project": SimpleNamespace(is_free_text=False)}  # fmt: skip
    shown = render_to_string("evaluation/_failed_sets.html", context)
    assert "&lt;br" not in shown and "<br>" in shown
