"""Real IMDb reviews in the browser (issue 59, docs/task-types.md): the paragraphs their
`<br /><br />` mark are shown as line breaks where the page draws a text itself: the validate
page's next item (swapped in by script from the API's `fields_html`), a crowd participant's
items, and the editor's live diff (drawn by its script with the server's pattern)."""

import pytest
from playwright.sync_api import expect

from annotation.crowd.services import studies
from tests.annotation.test_texts_shown import BREAK, imdb_pairs
from tests.browser.conftest import screenshot
from tests.factories import ExampleFactory, submitted_perturbation

pytestmark = pytest.mark.browser


def as_read(text: str) -> str:
    """What a reader's copy of the text holds: a line break for each tag."""
    return BREAK.sub("\n", text)


@pytest.fixture
def reviews(project, people, shared_data):  # type: ignore[no-untyped-def]
    """Three real IMDb edits open to validate, with no control items and no crowd gates."""
    project.settings = {**project.settings, "control_rate": 0, "qualification_items": 0,
                        "gold_rate": 0.0}  # fmt: skip
    project.save()
    texts = []
    for n, (original, contrast) in enumerate(imdb_pairs(shared_data, 3)):
        pivot = ExampleFactory(project=project, external_id=f"imdb-{n}", label="positive",
                               fields={"text": original["Text"]})  # fmt: skip
        submitted_perturbation(project, people["expert"], pivot=pivot, text=contrast["Text"])
        texts.append(contrast["Text"])
    return texts


def read_items(page, texts: list[str], count: int) -> None:  # type: ignore[no-untyped-def]
    """Vote on `count` items, each one's paragraphs checked as shown before the vote."""
    page.wait_for_load_state("networkidle")  # the page's keys are bound
    for done in range(count):
        expect(page.locator("#done-count")).to_have_text(str(done))
        box = page.locator(".item-text")
        shown = box.inner_text()
        assert "<br" not in shown and shown in {as_read(t).strip() for t in texts}
        assert box.locator("br").count() == shown.count("\n")
        page.keyboard.press("1")
        expect(page.locator("#done-count")).to_have_text(str(done + 1))


def test_a_validators_next_items_show_their_paragraphs(page, login, project, reviews):
    login("victor")
    page.goto(f"/p/{project.slug}/validate/")
    screenshot(page, "validate-imdb-paragraphs")
    read_items(page, reviews, 3)  # the first served with the page, the next two by script


def test_a_crowd_participant_reads_real_reviews_in_paragraphs(project, people, reviews, browser,
                                                              live_server):  # fmt: skip
    study = studies.study_create(project=project, actor=people["admin"], name="Pilot",
                                 platform="prolific", items_per_participant=3)  # fmt: skip
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"/p/{project.slug}/study/{study.token}/?PROLIFIC_PID=60f1a2b3c4d5e6f7a8b9c0d1"
              "&STUDY_ID=s1&SESSION_ID=x1")  # fmt: skip
    page.click("#start")
    screenshot(page, "study-imdb-paragraphs")
    read_items(page, reviews, 2)
    context.close()


def test_the_editors_live_diff_shows_a_removed_paragraph_break(
    page, login, project, people, shared_data
):
    (original, _), *_ = imdb_pairs(shared_data, 1)
    text = original["Text"]
    pivot = ExampleFactory(project=project, external_id="imdb-0", label="negative",
                           fields={"text": text})  # fmt: skip
    login("erin")
    page.goto(f"/p/{project.slug}/pivots/{pivot.pk}/edit/")
    page.click("#claim")
    page.wait_for_url("**/edit/")
    assert page.inner_text("#pivot-text") == as_read(text).strip()
    breaks = len(BREAK.findall(text))
    first = text.index("<br />")
    edited = text[:first] + " Not really." + text[first + len("<br />") :]  # one break less
    page.locator("textarea[data-field=text]").fill(edited)
    expect(page.locator("#diff-text ins")).to_have_text(" Not really.")
    diff = page.locator("#diff-text")
    assert "<br" not in diff.inner_text()
    expect(diff.locator("del")).to_have_text("↵\n")  # the removed break, seen
    expect(diff.locator("br")).to_have_count(breaks)  # kept ones and the removed one
    screenshot(page, "editor-imdb-diff")
