"""CSV injection through a line break (issue 48, item 4): every CSV and TSV the product writes
quotes a cell holding "\r" or "\n", and escapes a formula start at the start of every line of a
cell, so that neither a CSV reader nor a spreadsheet that breaks rows at any "\r" or "\n" sees a
cell that starts a formula; ContrastLab's readers give the text back exactly."""

import csv
import io
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from annotation.downloads import lines
from annotation.models import Example
from annotation.text.cells import from_spreadsheet_cell, spreadsheet_cell, tsv_line

FORMULA = ("=", "+", "-", "@", "\t", "\r")
RISKY = ["\r=1+1", "a\r=1+1", "b\n+2", "\r\n@SUM(A1)", "c\r\n-3", "\t=x\r\t=y", "'\r'=z", "ok"]
TEXT = st.text(alphabet=st.sampled_from(list("ab \t\n\r\"'=+-@,")), max_size=10)


def starts_no_formula(written: str, delimiter: str = ",") -> bool:
    """No cell that the csv module reads starts a formula, nor does any line of one, nor any row
    of a spreadsheet that starts a new row at every "\r" or "\n", quoted or not."""
    parsed = csv.reader(io.StringIO(written, newline=""), delimiter=delimiter)
    cells = [cell for row in parsed for cell in row]
    inner = [line for cell in cells for line in re.split(r"[\r\n]", cell)]
    # A naive row that starts with the delimiter starts with an empty cell.
    naive_rows = [row for row in re.split(r"[\r\n]", written) if not row.startswith(delimiter)]
    return not any(text.startswith(FORMULA) for text in cells + inner + naive_rows)


@pytest.mark.django_db
def test_imported_carriage_returns_export_as_csv_with_no_formula_at_any_line_start(
    project, people, client_for
):
    """ "\r=1+1" was written unquoted as `'\r=1+1`: a spreadsheet's next row began with =1+1."""
    rows = [{"id": f"r{n}", "text": text, "label": "positive"} for n, text in enumerate(RISKY)]
    content = "\n".join(json.dumps(row) for row in rows).encode()
    imported = client_for(people["admin"]).post(
        f"/api/projects/{project.slug}/examples/import/",
        {"file": SimpleUploadedFile("risky.jsonl", content), "split": "test"},
        format="multipart",
    )
    assert imported.status_code == 201, imported.json()
    page = Client()
    page.force_login(people["admin"])
    ids = list(Example.objects.filter(project=project).values_list("pk", flat=True))
    answer = page.post(
        f"/p/{project.slug}/data/bulk/",
        {"action": "export", "format": "csv", "kind": "originals", "ids": ids},
    )
    written = b"".join(answer.streaming_content).decode()
    assert starts_no_formula(written)
    table = list(csv.DictReader(io.StringIO(written, newline="")))
    assert sorted(from_spreadsheet_cell(row["text"]) for row in table) == sorted(RISKY)


@given(st.lists(TEXT, min_size=1, max_size=4))
def test_a_csv_download_reads_back_exactly_and_starts_no_formula(values):
    written = "".join(lines([dict(enumerate(values))], "csv"))
    assert starts_no_formula(written)
    [_, row] = csv.reader(io.StringIO(written, newline=""))
    assert [from_spreadsheet_cell(cell) for cell in row] == values


@given(st.lists(TEXT, min_size=1, max_size=4))
def test_a_tsv_line_starts_no_formula_at_any_line_start(values):
    assert starts_no_formula(tsv_line(values), "\t")


def test_every_line_of_a_cell_that_starts_like_a_formula_is_escaped():
    assert spreadsheet_cell("a\r=1+1") == "a\r'=1+1"
    assert spreadsheet_cell("\r=1+1") == "'\r'=1+1"
    assert spreadsheet_cell("x\r\n-3\n'q") == "x\r\n'-3\n''q"
    assert from_spreadsheet_cell("x\r\n'-3\n''q") == "x\r\n-3\n'q"
    assert from_spreadsheet_cell("it's\n'fine") == "it's\n'fine"
