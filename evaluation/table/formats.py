"""The results table written out (docs/workflows.md, "The results table"): CSV for scripts
(proportions as stored, an interval's ends and n in columns of their own), Markdown and a
LaTeX tabular for papers (percentages to one decimal, the interval and n beside each).
One direction: the table in, text out."""

from collections.abc import Callable

from annotation.text.cells import csv_line
from evaluation.table.selectors import FIGURES, Cell, Figure, ResultsTable, Row

STATUS_TEXT = {"running": "running", "missing": "not scored", "absent": "no such model"}
LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # A cell may start a line: "[" there would be the optional argument of the "\\" before it
    "[": "{[}",
    "]": "{]}",
}


def _label(row: Row) -> list[str]:
    return [row.project_name, row.version, row.tag or "", str(row.sets)]


def _number(value: float | None) -> str:
    return "" if value is None else repr(value)


def csv_text(table: ResultsTable) -> str:
    head = ["project", "project_name", "release", "tag", "sets"]
    for model in table.models:
        head.append(f"{model}: run")
        for key in table.figures:
            head += [f"{model}: {key}{end}" for end in ("", " low", " high", " n")]
    lines = [csv_line(head)]
    for row in table.rows:
        values = [row.project, row.project_name, row.version, row.tag or "", str(row.sets)]
        for model in table.models:
            cell = row.cells[model]
            values.append(str(cell.run) if cell.status == "scored" else "")
            for key in table.figures:
                values += _csv_figure(cell.figures.get(key))
        lines.append(csv_line(values))
    return "".join(lines)


def _csv_figure(figure: Figure | None) -> list[str]:
    if figure is None:
        return ["", "", "", ""]
    low, high = figure.interval or (None, None)
    n = "" if figure.n is None else str(figure.n)
    return [_number(figure.value), _number(low), _number(high), n]


def _percent(value: float | None) -> str:
    return "" if value is None else f"{value * 100:.1f}"


def _cell_text(cell: Cell, key: str, interval: Callable[[str, str], str]) -> str:
    """A figure as a percentage, its interval and its n; a cell without it, why."""
    figure = cell.figures.get(key)
    if figure is None or figure.value is None:
        return STATUS_TEXT.get(cell.status, "") if key == "consistency" else ""
    text = _percent(figure.value)
    if figure.interval:
        text += interval(_percent(figure.interval[0]), _percent(figure.interval[1]))
    return text + (f" (n={figure.n})" if figure.n is not None else "")


def _markdown_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown_text(table: ResultsTable) -> str:
    head = ["Project", "Release", "Tag", "Sets"]
    head += [f"{model}: {FIGURES[key][0]}" for model in table.models for key in table.figures]
    lines = [_markdown_line(head), _markdown_line(["---"] * 3 + ["---:"] * (len(head) - 3))]
    for row in table.rows:
        cells = [
            _cell_text(row.cells[model], key, lambda low, high: f" [{low}, {high}]")
            for model in table.models
            for key in table.figures
        ]
        lines.append(_markdown_line(_label(row) + cells))
    note = f"Split {table.split}; percentages with their 95% intervals and n (docs/metrics.md)."
    return "\n".join(lines) + f"\n\n{note}\n"


def _markdown_line(cells: list[str]) -> str:
    return "| " + " | ".join(_markdown_escape(c) for c in cells) + " |"


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(char, char) for char in text)


def latex_text(table: ResultsTable) -> str:
    """A tabular with a column group per model (needs no package); \\input it in a table."""
    width = len(table.figures)
    spec = "llr" + "".join("|" + "r" * width for _ in table.models)
    groups = " & ".join(
        rf"\multicolumn{{{width}}}{{c}}{{{latex_escape(model)}}}" for model in table.models
    )
    names = [latex_escape(FIGURES[key][0]) for _ in table.models for key in table.figures]
    lines = [
        f"% ContrastLab results table, split {table.split}: percentages, their 95 per cent "
        "intervals and n",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\hline",
        (rf" & & & {groups} \\" if table.models else r" & & \\"),
        " & ".join(["Dataset", "Release", "Sets", *names]) + r" \\",
        r"\hline",
    ]
    for row in table.rows:
        name = row.project_name + (f" ({row.tag})" if row.tag else "")
        cells = [
            latex_escape(_cell_text(row.cells[model], key, lambda low, high: f" [{low}, {high}]"))
            for model in table.models
            for key in table.figures
        ]
        label = [latex_escape(name), latex_escape(row.version), str(row.sets)]
        lines.append(" & ".join(label + cells) + r" \\")
    lines += [r"\hline", r"\end{tabular}", ""]
    return "\n".join(lines)


FORMATS = {
    "csv": ("text/csv", csv_text),
    "md": ("text/markdown", markdown_text),
    "tex": ("application/x-tex", latex_text),
}
