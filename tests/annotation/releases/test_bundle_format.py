"""The bundle's own writers against the standard library's."""

import csv
import io
import re

from hypothesis import given
from hypothesis import strategies as st

from annotation.text.cells import from_spreadsheet_cell, tsv_line

TEXT = st.text(alphabet=st.sampled_from(list("ab \t\n\r\"'\\é=+-@")), max_size=8)


def owasp(value: str) -> str:
    """OWASP's CSV-injection rule, restated: a cell that a spreadsheet would run as a formula
    starts with an apostrophe (and so, to read back exactly, does one that starts with one);
    so does every line of a cell, for a reader that starts a row at any "\r" or "\n"."""
    lines = re.split(r"(?<=[\r\n])", value)
    return "".join(
        "'" + line if line[:1] in ("=", "+", "-", "@", "\t", "\r", "'") else line for line in lines
    )


@given(st.lists(TEXT.filter(lambda text: "\r" not in text), min_size=1, max_size=3))
def test_tsv_lines_are_what_the_csv_module_writes_with_formulas_escaped(values):
    """(The csv module, writing "\n" line ends, leaves a cell with "\r" unquoted: it would not
    read back. Those cells are left to the round trip below.)"""
    out = io.StringIO()
    csv.writer(out, delimiter="\t", lineterminator="\n").writerow([owasp(v) for v in values])
    assert tsv_line(values) == out.getvalue()


@given(st.lists(TEXT, min_size=1, max_size=3))
def test_a_tsv_line_reads_back_as_the_values_written(values):
    [row] = csv.reader(io.StringIO(tsv_line(values), newline=""), delimiter="\t")
    assert [from_spreadsheet_cell(cell) for cell in row] == values


def test_no_cell_of_a_tsv_line_starts_a_formula():
    line = tsv_line(['=HYPERLINK("http://x")', "+1", "-2", "@SUM(A1)", "plain"])
    [cells] = csv.reader(io.StringIO(line, newline=""), delimiter="\t")
    assert [cell[:2] for cell in cells] == ["'=", "'+", "'-", "'@", "pl"]
