"""At a phone's width (390 px) the project list shows every column it keeps, no title runs off
the screen, and a table's last columns (Status) stay on it."""

import pytest
from django.db import connection

from annotation.authoring.services.claims import pivot_claim
from evaluation.models import EvaluationRun, ModelSpec
from tests.browser.conftest import screenshot
from tests.factories import ExampleFactory, submitted_perturbation

pytestmark = pytest.mark.browser


def test_pages_fit_a_phone(page, login, project, people, released):
    name, source = "a-rather-long-model-name-v2-instruct", "tests.evaluation.rule_models:keyword"
    spec = ModelSpec.objects.create(project=project, name=name, kind="python", source=source)
    run = EvaluationRun.objects.create(release=released, model=spec, split="test")
    page.set_viewport_size({"width": 390, "height": 800})
    login("alice")
    for path in ("/", f"/p/{project.slug}/evaluations/{run.pk}/", f"/p/{project.slug}/data/"):
        page.goto(path)
        overflow = page.evaluate("document.documentElement.scrollWidth")
        title = page.locator("h1").bounding_box()
        assert title is not None and title["x"] + title["width"] <= 390, (path, title)
        if path != f"/p/{project.slug}/evaluations/{run.pk}/":
            assert overflow <= 390, (path, overflow)
        if path == "/":
            roles = page.locator("#projects td").last.bounding_box()
            assert roles is not None and roles["x"] + roles["width"] <= 390
    screenshot(page, "phone-data")


def _row_visible(page, row: str) -> None:  # type: ignore[no-untyped-def]
    """Every cell of the row that the page shows lies inside its card, without scrolling the
    card sideways."""
    card = page.locator(row).first.locator("xpath=ancestor::section[1]").bounding_box()
    assert card is not None, row
    right = min(card["x"] + card["width"], 390) + 1
    cells = page.locator(f"{row} > td")
    for n in range(cells.count()):
        cell = cells.nth(n)
        if not cell.is_visible():  # a wide-only column, stepped aside
            continue
        box = cell.bounding_box()
        assert box is not None and box["x"] + box["width"] <= right, (row, n, box)


@pytest.fixture
def million_ids(db):  # type: ignore[no-untyped-def]
    """Row numbers of seven digits, as a project of a million rows has (the column is as wide
    as its numbers, whatever tests ran before)."""
    with connection.cursor() as cursor:
        for table in ("annotation_example", "annotation_perturbation"):
            cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), 1234567)")


def test_the_status_column_shows_at_a_phones_width(page, login, project, people, million_ids):
    """The Status column was clipped (scrolled out of its card) on the Data page's table and
    in the editor's list of a pivot's perturbations, as by NLVR2's image addresses, and by
    seven-digit row numbers beside the originals' Perturbations column."""
    url = "https://lil.nlp.cornell.edu/resources/NLVR2/test1/test1-419-2-1-img0.png"
    pivot = ExampleFactory(
        project=project, fields={"text": f"{url} good"}, label="positive",
        external_id="5e0f8e4c8bd0d7bf2ad2a5f61e1b4a4e0f6a9c1d",  # as long as Quoref's ids
    )  # fmt: skip
    submitted_perturbation(project, people["expert"], pivot=pivot, text=f"{url} bad")
    page.set_viewport_size({"width": 390, "height": 800})
    login("alice")
    page.goto(f"/p/{project.slug}/data/")
    _row_visible(page, "#data-rows tbody tr")
    screenshot(page, "phone-data-status")
    page.goto(f"/p/{project.slug}/data/?kind=originals")
    _row_visible(page, "#data-rows tbody tr")
    pivot_claim(pivot=pivot, expert=people["expert"])
    login("erin")
    page.goto(f"/p/{project.slug}/pivots/{pivot.pk}/edit/")
    _row_visible(page, "#existing tbody tr")
    screenshot(page, "phone-editor-status")


def test_the_data_pages_text_keeps_its_words_whole_at_a_phones_width(
    page, login, project, people, million_ids
):
    """The walk of issue 47: at 390 px the Text column was squeezed to about 70 px, so that
    ordinary words broke mid-word ("charmin g", "comforta ble"). The column is now as wide as
    its longest ordinary word at least; a long address may still break anywhere (the test
    above), so that Status stays on the screen."""
    text = "A charming little cafe; the chairs are comfortable, but only for a short dinner."
    pivot = ExampleFactory(project=project, fields={"text": text}, label="positive")
    submitted_perturbation(
        project, people["expert"], pivot=pivot, text=text.replace("charming", "dull")
    )
    page.set_viewport_size({"width": 390, "height": 800})
    login("alice")
    page.goto(f"/p/{project.slug}/data/")
    excerpt = page.locator("#data-rows tbody tr .excerpt").first
    widths = excerpt.evaluate(
        """(div) => {
            const probe = document.createElement("span");
            probe.style.whiteSpace = "nowrap";
            div.appendChild(probe);
            const words = div.textContent.split(/\\s+/).filter(Boolean);
            let widest = 0;
            for (const word of words) {
                probe.textContent = word;
                widest = Math.max(widest, probe.getBoundingClientRect().width);
            }
            probe.remove();
            return [widest, div.getBoundingClientRect().width];
        }"""
    )
    widest, column = widths
    assert column >= widest, (widest, column)  # no word is wider than its column
    _row_visible(page, "#data-rows tbody tr")
    screenshot(page, "phone-data-words")
