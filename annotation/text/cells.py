"""Cells and rows of the CSV and TSV files people download and upload (release bundles, votes,
predictions): one writer, which no spreadsheet runs as formulas, and its reader. Shared by the
workflows that write tables (releases, downloads) and the readers of uploads (imports)."""

import re
from collections.abc import Iterable

# A spreadsheet reads a cell that starts with one of these as a formula (CSV injection):
# OWASP's rule is to write such a cell with a leading apostrophe, which spreadsheets hide
# (docs/formats.md). A cell that starts with an apostrophe gets one more, so that reading back
# gives the value exactly. The same holds for every line of a cell: a reader that starts a new
# row at each "\r" or "\n", even inside quotes, would otherwise run "a\r=1+1" as =1+1.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
ESCAPED_START = (*FORMULA_START, "'")
_STARTS = "[" + re.escape("".join(ESCAPED_START)) + "]"
_LINE_TO_ESCAPE = re.compile(rf"(?:^|(?<=[\r\n]))(?={_STARTS})")
_LINE_ESCAPED = re.compile(rf"(?:^|(?<=[\r\n]))'(?={_STARTS})")


def spreadsheet_cell(value: object) -> str:
    """A value as a CSV/TSV cell that no spreadsheet runs as a formula, at any line's start."""
    text = str(value)
    if "\n" in text or "\r" in text:
        return _LINE_TO_ESCAPE.sub("'", text)
    return "'" + text if text.startswith(ESCAPED_START) else text


def from_spreadsheet_cell(text: str) -> str:
    """The value a cell written by spreadsheet_cell holds."""
    if "\n" in text or "\r" in text:
        return _LINE_ESCAPED.sub("", text)
    return text[1:] if text.startswith("'") and text[1:].startswith(ESCAPED_START) else text


# A cell holding one of these is quoted. The csv module, writing "\n" line ends, leaves a cell
# holding "\r" unquoted, and a spreadsheet starts a new row there.
NEEDS_QUOTES = {"\t": re.compile('[\t\n\r"]'), ",": re.compile('[,\n\r"]')}


def _quoted(cell: str, needs_quotes: re.Pattern[str]) -> str:
    return '"' + cell.replace('"', '""') + '"' if needs_quotes.search(cell) else cell


def delimited_line(values: Iterable[object], delimiter: str) -> str:
    """One TSV or CSV row, quoting only the cells that need it, as the csv module does; unlike
    it with a "\n" line end, a cell holding "\r" is quoted too, so that it reads back whole.
    Formula-leading lines are escaped (spreadsheet_cell)."""
    needs_quotes = NEEDS_QUOTES[delimiter]
    cells = [_quoted(spreadsheet_cell(value), needs_quotes) for value in values]
    if cells == [""]:
        return '""\n'  # a lone empty cell, which an empty line would lose
    return delimiter.join(cells) + "\n"


def tsv_line(values: Iterable[object]) -> str:
    return delimited_line(values, "\t")


def csv_line(values: Iterable[object]) -> str:
    return delimited_line(values, ",")
