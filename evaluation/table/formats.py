"""The results table written out (docs/workflows.md, "The results table"): CSV for scripts
(proportions as stored, an interval's ends and n in columns of their own), Markdown and a
LaTeX tabular for papers (percentages to one decimal, each with ± half its 95% interval's width,
the contrast sets in a column of their own; a dash where a cell has no figure). One direction:
the table in, text out."""

from annotation.text.cells import csv_line
from evaluation.table.selectors import FIGURES, Cell, Figure, ResultsTable, Row

STATUS_TEXT = {
    "running": "running",
    "missing": "not scored",
    "failed": "failed",
    "absent": "no such model",
}
DASH = "\u2013"  # an en dash
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
    DASH: "--",
}
# A figure's place in the LaTeX head: its group over the columns, and its own short name
LATEX_HEAD = {
    "original_accuracy": ("Accuracy", "orig."),
    "perturbed_accuracy": ("Accuracy", "pert."),
    "original_em": ("EM", "orig."),
    "perturbed_em": ("EM", "pert."),
    "original_f1": ("F1", "orig."),
    "perturbed_f1": ("F1", "pert."),
    "pair_accuracy": ("Pair", "acc."),
    "consistency": ("", "Consistency"),
}
# booktabs' rules (\toprule, \midrule, \bottomrule) in plain LaTeX: no package to load
TOP_RULE = r"\noalign{\hrule height .08em\vskip .5ex}"
MID_RULE = r"\noalign{\vskip .3ex\hrule height .05em\vskip .5ex}"
BOTTOM_RULE = r"\noalign{\vskip .3ex\hrule height .08em}"
GAP = r"\noalign{\vskip .6ex}"  # between releases, where booktabs would \addlinespace


def _number(value: float | None) -> str:
    return "" if value is None else repr(value)


def csv_text(table: ResultsTable) -> str:
    ends = ("", " low", " high", " n") if table.intervals else ("", " n")
    head = ["project", "project_name", "release", "tag", "sets"]
    for model in table.models:
        head += [f"{model}: run", f"{model}: status"]
        for key in table.figures:
            head += [f"{model}: {key}{end}" for end in ends]
    lines = [csv_line(head)]
    for row in table.rows:
        values = [row.project, row.project_name, row.version, row.tag or "", str(row.sets)]
        for model in table.models:
            cell = row.cells[model]
            values += ["" if cell.run is None else str(cell.run), cell.status]
            for key in table.figures:
                values += _csv_figure(cell.figures.get(key), table.intervals)
        lines.append(csv_line(values))
    return "".join(lines)


def _csv_figure(figure: Figure | None, intervals: bool) -> list[str]:
    if figure is None:
        return ["", "", "", ""] if intervals else ["", ""]
    low, high = figure.interval or (None, None)
    n = "" if figure.n is None else str(figure.n)
    if not intervals:
        return [_number(figure.value), n]
    return [_number(figure.value), _number(low), _number(high), n]


def _percent(value: float) -> str:
    return f"{value * 100:.1f}"


def _value(figure: Figure | None) -> str:
    return DASH if figure is None or figure.value is None else _percent(figure.value)


def _half_width(figure: Figure | None) -> str:
    """± half the width of the figure's 95% interval, in points; "" without one."""
    if figure is None or figure.value is None or not figure.interval:
        return ""
    low, high = figure.interval
    return f"±{(high - low) * 50:.1f}"


def _why_dashes(table: ResultsTable) -> list[str]:
    """Each cell without figures, and why (not scored, running, failed, no such model)."""
    return [
        f"{model} on {row.project_name} {row.version}: {STATUS_TEXT[cell.status]}"
        for row in table.rows
        if row.tag is None
        for model, cell in row.cells.items()
        if cell.status in STATUS_TEXT
    ]


def _notes(table: ResultsTable) -> list[str]:
    notes = [f"Split {table.split}; figures in per cent"]
    if table.intervals:
        notes[0] += ", each ± half the width of its 95% interval (bootstrap over contrast sets)"
    notes[0] += "; n of each figure in the CSV download."
    if table.by == "tag":
        notes.append(
            "A tag's row: the sets holding a perturbation of that tag, and the figures of those "
            "perturbations (a tag marks perturbations, so originals and consistency have none)."
        )
    why = _why_dashes(table)
    if why:
        notes.append(f"{DASH}: no figure ({'; '.join(why)}).")
    return notes


def _markdown_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _markdown_cell(cell: Cell, key: str, intervals: bool) -> str:
    figure = cell.figures.get(key)
    width = _half_width(figure) if intervals else ""
    return f"{_value(figure)} {width}".strip()


def markdown_text(table: ResultsTable) -> str:
    tagged = table.by == "tag"
    label = ["Project", "Release", *(["Tag"] if tagged else []), "Sets"]
    head = label + [f"{m}: {FIGURES[key][0]}" for m in table.models for key in table.figures]
    rule = ["---"] * (len(label) - 1) + ["---:"] * (len(head) - len(label) + 1)
    lines = [_markdown_line(head), _markdown_line(rule)]
    for row in table.rows:
        names = [row.project_name, row.version, *([row.tag or ""] if tagged else [])]
        cells = [
            _markdown_cell(row.cells[model], key, table.intervals)
            for model in table.models
            for key in table.figures
        ]
        lines.append(_markdown_line([*names, str(row.sets), *cells]))
    return "\n".join(lines) + "\n\n" + "\n".join(_notes(table)) + "\n"


def _markdown_line(cells: list[str]) -> str:
    return "| " + " | ".join(_markdown_escape(c) for c in cells) + " |"


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(char, char) for char in text)


def _latex_head(keys: list[str], first: int) -> tuple[list[str], list[str]]:
    """Two head lines: each group's name over its columns (ruled under), then each column's."""
    groups: list[tuple[str, int]] = []
    for key in keys:
        group = LATEX_HEAD[key][0]
        if groups and groups[-1][0] == group and group:
            groups[-1] = (group, groups[-1][1] + 1)
        else:
            groups.append((group, 1))
    over, rules, column = [""] * first, [], first + 1
    for group, span in groups:
        over.append(rf"\multicolumn{{{span}}}{{c}}{{{group}}}" if span > 1 else group)
        if group:
            rules.append(rf"\cline{{{column}-{column + span - 1}}}")
        column += span
    names = [LATEX_HEAD[key][1] for key in keys]
    return [" & ".join(over) + r" \\" + "".join(rules)], names


def latex_text(table: ResultsTable) -> str:
    """A tabular (plain LaTeX, no package; \\small, narrower column gaps): a heading line per
    release (or tag) with its sets, then a line per model, the figures in columns. \\input it
    in a table environment."""
    keys = [key for key in LATEX_HEAD if key in table.figures]
    over, names = _latex_head(keys, 1)
    ruled = [r"\noalign{\vskip .2ex}"] if any(LATEX_HEAD[k][0] for k in keys) else []
    lines = [
        "% ContrastLab results table: plain LaTeX (rules drawn as booktabs draws them, no "
        "package needed); \\input it in a table environment.",
        *(f"% {note}" for note in _notes(table)),
        r"{\small\setlength{\tabcolsep}{4pt}%",
        rf"\begin{{tabular}}{{{'l' + 'r' * len(keys)}}}",
        TOP_RULE,
        *over,
        *ruled,
        " & ".join(["Model", *names]) + r" \\",
        MID_RULE,
    ]
    for i, row in enumerate(table.rows):
        if i and row.tag is None:
            lines.append(GAP)
        lines += _latex_rows(table, row, keys)
    lines += [BOTTOM_RULE, r"\end{tabular}}", ""]
    return "\n".join(lines)


def _latex_heading(table: ResultsTable, row: Row, columns: int) -> str:
    """A release's (or tag's) line over its models: its name and its number of sets."""
    if row.tag is None:
        name = rf"\textit{{{latex_escape(row.project_name)}}}"
        if table.releases == "all":
            name += f", release {latex_escape(row.version)}"
    else:
        name = rf"\quad tag \textit{{{latex_escape(row.tag)}}}"
    sets = f"{row.sets} set{'s' if row.sets != 1 else ''}"
    return rf"\multicolumn{{{columns}}}{{l}}{{{name} ({sets})}} \\"


def _latex_rows(table: ResultsTable, row: Row, keys: list[str]) -> list[str]:
    """A row's heading, then per model its figures and under them (intervals shown) each ±."""
    lines = [_latex_heading(table, row, 1 + len(keys))]
    for model in table.models:
        cell = row.cells[model]
        values = [latex_escape(_value(cell.figures.get(key))) for key in keys]
        lines.append(" & ".join([latex_escape(model), *values]) + r" \\")
        widths = [_half_width(cell.figures.get(key)) for key in keys]
        if table.intervals and any(widths):
            small = [rf"{{\footnotesize $\pm${w[1:]}}}" if w else "" for w in widths]
            lines.append(" & ".join(["", *small]) + r" \\")
    return lines


FORMATS = {
    "csv": ("text/csv", csv_text),
    "md": ("text/markdown", markdown_text),
    "tex": ("application/x-tex", latex_text),
}
