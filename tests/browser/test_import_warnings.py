"""Quoref's real files imported on the page (issue 59): the warnings' rows add up to the count
the heading gives, each names its questions by their ids and lines, and every one of them can
be listed: unfolded on the page, on "show all" and in the CSV."""

import csv

import pytest
from playwright.sync_api import expect

from tests.annotation.imports.test_published_real import GARDNER, TABLE_2, files_of
from tests.browser.conftest import screenshot
from tests.browser.test_published_flow import import_from_the_page
from tests.factories import UserFactory

pytestmark = pytest.mark.browser


def test_quorefs_warnings_add_up_and_each_can_be_listed(page, login, tmp_path):
    files = files_of(GARDNER, TABLE_2["quoref"][0])
    UserFactory(username="root", is_staff=True, is_superuser=True)
    login("root")
    import_from_the_page(page, tmp_path, "quoref", files, validate=False)
    card = page.locator("#import-warnings")
    heading = card.locator("h2").inner_text()
    total = int(heading.split("with ")[1].split(" ")[0])
    counts = [int(c) for c in card.locator("tbody tr td:first-child").all_inner_texts()]
    assert sum(counts) == total, (heading, counts)
    assert sorted(counts) == [2, 7, 56]  # renamed ids, identical edits, context edits
    # The 56 context edits: 8 places shown, the other 48 unfold; each an id with its line
    row = card.locator("tbody tr", has_text="read-only field 'context'")
    more = row.locator("details.more-places")
    expect(more.locator("summary")).to_have_text("and 48 more")
    assert not more.evaluate("d => d.open")
    more.locator("summary").click()
    assert more.evaluate("d => d.open")
    places = row.locator("td.places").inner_text().replace("and 48 more", ",").split(",")
    places = [p.strip() for p in places if p.strip()]
    assert len(places) == 56 and all(p.split(" (line ")[1].rstrip(")").isdigit() for p in places)
    assert "\u2013" not in card.inner_text() and "data[" not in card.inner_text()  # no dash
    screenshot(page, "quoref-warnings")
    with page.expect_download() as download:
        card.locator("#warnings-csv").click()
    with open(download.value.path(), encoding="utf-8") as sheet:
        rows = list(csv.DictReader(sheet))
    assert len(rows) == total and all(r["id"] and r["line"].isdigit() for r in rows)
    listed = {f"{r['id']} (line {r['line']})" for r in rows}
    assert set(places) <= listed
    card.locator("#all-warnings").click()
    shown = page.locator("#warning-rows tr")
    expect(shown).to_have_count(total)
    ids = page.locator("#warning-rows td.id").all_inner_texts()
    assert sorted(ids) == sorted(r["id"] for r in rows)
    screenshot(page, "quoref-warnings-all")
