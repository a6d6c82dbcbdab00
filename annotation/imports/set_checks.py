"""What a set import checks of each perturbation (docs/workflows.md): its shape, label or
answers and tags (errors), the fields authors may not change (edits of them are kept as
written, with a warning), and the authoring rules a kept edit breaks (warnings)."""

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from annotation.authoring.rules import edit_problems
from annotation.imports.readers import LineError, field_problem
from annotation.imports.services.originals import ParsedRow
from annotation.models import Project
from annotation.text.answers import AnswerRules


def check_text(project: Project, line: int | None, fields: Any, what: str) -> list[LineError]:
    if not isinstance(fields, dict):
        return [LineError(line, f"{what}: fields must be an object.")]
    problems = [field_problem(project, fields, n, f"field {n!r}") for n in project.field_names]
    return [LineError(line, f"{what}: {problem}") for problem in problems if problem]


def check_perturbation(
    project: Project, line: int | None, original: ParsedRow, p: dict[str, Any], tags: set[str]
) -> list[LineError]:
    errors = check_text(project, line, p.get("fields"), f"{where_of(p)}perturbation")
    if project.is_free_text:
        if isinstance(p.get("answers"), str):
            errors.append(LineError(line, f"perturbation: {p['answers']}"))
    elif p.get("label") not in project.labels:
        errors.append(
            LineError(
                line,
                f"unknown label {p.get('label')!r}; the project's labels are "
                f"{', '.join(project.labels)}.",
            )
        )
    names = p.get("tags")
    if not isinstance(names, list) or not all(isinstance(t, str) for t in names):
        errors.append(LineError(line, "tags must be a list of tag names."))
    elif not names:
        errors.append(LineError(line, "each perturbation needs at least one tag."))
    elif unknown := [t for t in names if t not in tags]:
        errors.append(LineError(line, f"unknown tag {unknown[0]!r}."))
    return errors


def readonly_edits(project: Project, original: ParsedRow, p: dict[str, Any]) -> list[str]:
    """The fields authors may not change that this perturbation changes."""
    return [
        name
        for name in project.field_names
        if name not in project.editable_field_names and p["fields"][name] != original.fields[name]
    ]


def kept_edit(name: str, p: dict[str, Any], line: int | None, set_id: str) -> "Warned":
    """A published perturbation that edits a read-only field: kept as published, warned."""
    kind = f"the edit changes the read-only field {name!r}, kept as published"
    at = line_in(p, line)
    return Warned(at, f"{where_of(p)}{kind}.", kind, p.get("where") or "", p.get("id") or set_id)


def alone(sets: list[Any]) -> list[LineError]:
    """A warning for each set with no perturbation, kept as a set of one (an original alone,
    as NLVR2 publishes some)."""
    kind = (
        "the set has no perturbation: kept as a set of one (an original alone, consistent "
        "when it is right)"
    )
    return [
        Warned(
            s.line,
            f"set {s.original.external_id}: {kind}.",
            kind,
            "",
            s.original.external_id,
            "set",
        )
        for s in sets
        if not s.perturbations
    ]


@dataclass
class Warned(LineError):
    """A warning about one perturbation (or set, its `unit`): its `kind` (what the summary
    groups by), `where` it is in the file (a record's position in a JSON document, or
    "file line N") and `id`, the dataset's own id of it."""

    kind: str = ""
    where: str = ""
    id: str = ""
    unit: str = "perturbation"

    def place(self) -> str:
        """Where it is, as the summary lists it: its id and line, else either, else its record."""
        if self.id and self.line:
            return f"{self.id} (line {self.line})"
        return self.id or (f"line {self.line}" if self.line else self.where)

    def stored(self, file: str) -> dict[str, Any]:
        """As the batch keeps it, for the warnings page and CSV: the line, else the record's
        place, else the whole file (never an empty `line`), and the dataset's id."""
        return {
            "file": file,
            "line": self.line or self.where or "whole file",
            "id": self.id,
            "message": self.message,
        }


@dataclass
class Counted(LineError):
    """A row of the summary: how many warnings it stands for (the rows' counts add up to the
    import's) and the place of each (set_checks.Warned.place), all of them."""

    count: int = 1
    places: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "count": self.count, "places": self.places}


def stored(warning: LineError, file: str) -> dict[str, Any]:
    if isinstance(warning, Warned):
        return warning.stored(file)
    return {
        "file": file,
        "line": warning.line or "whole file",
        "id": "",
        "message": warning.message,
    }


def line_in(p: dict[str, Any], fallback: int | None) -> int | None:
    """The perturbation's own line where its reader names it ("… line N"), else `fallback`."""
    found = re.search(r"\bline (\d+)$", p.get("where") or "")
    return int(found.group(1)) if found else fallback


def repeated(p: dict[str, Any], line: int | None, message: str) -> Warned:
    kind = "a perturbation repeats another of its set (same text and truth); both are kept"
    return Warned(line_in(p, line), message, kind, p.get("where") or "", p.get("id") or "")


def summarised(warnings: list[LineError]) -> list[Counted]:
    """The summary every set import shows (a paired TSV's and every published kind's alike):
    one row per kind of warning, with how many and where each is (the dataset's ids, and lines
    where the file has them); a warning about the whole file as it is, counted once. The rows'
    counts add up to the number of warnings."""
    kinds: dict[str, list[Warned]] = defaultdict(list)
    rows: list[Counted] = []
    for w in warnings:
        if isinstance(w, Warned) and w.kind:
            kinds[w.kind].append(w)
        else:
            rows.append(Counted(w.line, w.message, 1, [f"line {w.line}"] if w.line else []))
    for kind, same in kinds.items():
        places = [p for p in dict.fromkeys(w.place() for w in same) if p]
        # one of its kind: the warning itself says the most
        said = (
            same[0].message
            if len(same) == 1
            else f"{len(same)} {same[0].unit}s: {kind.rstrip('.')}."
        )
        rows.append(Counted(same[0].line, said, len(same), places))
    return rows


def where_of(p: dict[str, Any]) -> str:
    """Where a perturbation is in a published file, for messages about one of several."""
    return f"{p['where']}: " if p.get("where") else ""


def rule_warnings(
    project: Project, line: int | None, original: ParsedRow, p: dict[str, Any]
) -> list[LineError]:
    """The authoring rules (authoring.rules) a kept edit breaks, as warnings: an import keeps
    the edit unless it is strict. Gardner et al.'s edits usually, not always, change the label."""
    problems = edit_problems(project, original, p["fields"], p["label"], p.get("answers") or [])
    at = line_in(p, line)
    return [
        Warned(
            at,
            f"{where_of(p)}{problem.message}",
            _kind(project, problem),
            p.get("where", ""),
            p.get("id") or "",
        )
        for problem in problems
    ]


def _kind(project: Project, problem: Any) -> str:
    """A rule's warning without what varies from one edit to the next (the share of tokens,
    the original's label), for the summary."""
    if problem.admin_may_allow:
        limit = project.setting("max_edit_ratio")
        return f"the edit changes more than {limit:.0%} of the tokens, the project's limit"
    if problem.field == "label":
        return "the label is the original's: the edit does not change it"
    if problem.field == "answers":
        return "the answers are the original's once normalised: the edit does not change them"
    return problem.message


def erased_answers(project: Project, erased: list[str]) -> list[LineError]:
    """One warning for the kept answers that the project's rules normalise to nothing."""
    if not erased:
        return []
    rules = AnswerRules.of(project)
    shown = ", ".join(repr(a) for a in dict.fromkeys(erased[:50]))
    return [
        LineError(
            None,
            f"{len(erased)} answer(s) normalise to nothing under {rules.name}'s rules, this "
            f"project's ({shown}): kept as published, but no prediction or vote can match them; "
            "ROPES's rules (answer_normalization: ropes) keep articles and letters.",
        )
    ]


def truth_of(row: Any) -> Any:
    """What tells two imported rows apart beside their text: the label, or the answers as
    written (an import twice adds nothing; ROPES's "A" and "B" stay two answers)."""
    if isinstance(row, dict):
        label, answers = row["label"], row.get("answers") or []
    else:
        label, answers = row.label, row.answers
    return frozenset(a if isinstance(a, str) else tuple(a) for a in answers) if answers else label
