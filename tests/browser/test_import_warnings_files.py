"""Quoref's import reads two files, and its warnings' lines are lines of one of them (issue 59's
walk): "show all" gave "Line 2992" under a heading that names both files, and the CSV's file
column held both names. The CSV names the file each line is in, as its message does
("quoref_test_perturbations_20191206_merged.json line 2992: ..."), and the page says which file
its lines are in (a File column where they are in several)."""

import csv

import pytest
from playwright.sync_api import expect

from tests.annotation.imports.test_published_real import GARDNER, TABLE_2, files_of
from tests.browser.conftest import screenshot
from tests.browser.test_published_flow import import_from_the_page
from tests.factories import UserFactory

pytestmark = pytest.mark.browser


def test_each_warning_names_the_one_file_its_line_is_in(page, login, tmp_path):
    files = files_of(GARDNER, TABLE_2["quoref"][0])
    names = {name for name, _ in files}
    UserFactory(username="root", is_staff=True, is_superuser=True)
    login("root")
    import_from_the_page(page, tmp_path, "quoref", files, validate=False)
    card = page.locator("#import-warnings")
    with page.expect_download() as download:
        card.locator("#warnings-csv").click()
    with open(download.value.path(), encoding="utf-8") as sheet:
        rows = list(csv.DictReader(sheet))
    assert rows and all(r["file"] in names for r in rows), {r["file"] for r in rows}
    # The file each message names is the row's file (the messages are the importer's own).
    assert all(r["message"].startswith(f"{r['file']} line {r['line']}: ") for r in rows)
    card.locator("#all-warnings").click()
    expect(page.locator("#warning-rows tr")).to_have_count(len(rows))
    header = page.locator("table.grid thead th").all_inner_texts()
    in_files = {r["file"] for r in rows}
    if len(in_files) == 1:  # Quoref's are all in its perturbations' file: the page says which
        assert "File" not in header
        expect(page.locator("#warnings-file")).to_have_text(
            f"Every line below is a line of {in_files.pop()}."
        )
    else:
        column = header.index("File") + 1
        shown = page.locator(f"#warning-rows td:nth-child({column})").all_inner_texts()
        assert shown == [r["file"] for r in rows]
    screenshot(page, "quoref-warnings-files")
