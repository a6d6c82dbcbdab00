"""What a set import checks of each perturbation (docs/workflows.md): its shape, label or
answers and tags (errors), the fields authors may not change (edits of them are kept as
written, with a warning), and the authoring rules a kept edit breaks (warnings)."""

import re
from collections import defaultdict
from dataclasses import dataclass
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


def kept_edits(name: str, wheres: list[str]) -> LineError:
    """One warning for every published perturbation that edits a read-only field."""
    shown = ", ".join(wheres[:5]) + (f" and {len(wheres) - 5} more" if len(wheres) > 5 else "")
    return LineError(
        None,
        f"{len(wheres)} perturbation(s) edit the read-only field {name!r}, kept as "
        f"published: {shown}.",
    )


def alone(sets: list[Any]) -> list[LineError]:
    """One warning for the sets with no perturbation, kept as sets of one (an original alone,
    as NLVR2 publishes some)."""
    ids = [s.original.external_id for s in sets if not s.perturbations]
    if not ids:
        return []
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    return [
        LineError(
            None,
            f"{len(ids)} set(s) have no perturbation, kept as sets of one (an "
            f"original alone, consistent when it is right): {shown}.",
        )
    ]


@dataclass
class Warned(LineError):
    """A warning about one perturbation: its `kind` (what the summary groups by) and `where`
    it is in the file (a record's position in a JSON document, or "file line N")."""

    kind: str = ""
    where: str = ""

    def stored(self, file: str) -> dict[str, Any]:
        """As the batch keeps it, for the warnings page and CSV: the line, else the record's
        place, else the whole file: never an empty `line`."""
        return {
            "file": file,
            "line": self.line or self.where or "whole file",
            "message": self.message,
        }


def stored(warning: LineError, file: str) -> dict[str, Any]:
    if isinstance(warning, Warned):
        return warning.stored(file)
    return {"file": file, "line": warning.line or "whole file", "message": warning.message}


def line_in(p: dict[str, Any], fallback: int | None) -> int | None:
    """The perturbation's own line where its reader names it ("… line N"), else `fallback`."""
    found = re.search(r"\bline (\d+)$", p.get("where") or "")
    return int(found.group(1)) if found else fallback


def repeated(p: dict[str, Any], line: int | None, message: str) -> Warned:
    kind = "a perturbation repeats another of its set (same text and truth); both are kept"
    return Warned(line_in(p, line), message, kind, p.get("where") or "")


def summarised(warnings: list[LineError]) -> list[LineError]:
    """The summary every set import shows (a paired TSV's and every published kind's alike):
    one row per kind of warning, with how many and where (lines, or records of a JSON file);
    the warnings about the whole file as they are."""
    kinds: dict[str, list[Warned]] = defaultdict(list)
    whole = []
    for w in warnings:
        if isinstance(w, Warned) and w.kind:
            kinds[w.kind].append(w)
        else:
            whole.append(w)
    rows: list[LineError] = []
    for kind, same in kinds.items():
        if len(same) == 1:  # one of its kind: the warning itself says the most
            rows.append(LineError(same[0].line, same[0].message))
            continue
        places = [str(w.line) if w.line else w.where for w in same]
        places = [p for p in dict.fromkeys(places) if p]
        numbered = all(w.line for w in same)
        at = ", ".join(places[:8]) + (f" and {len(places) - 8} more" if len(places) > 8 else "")
        said = f"{len(same)} perturbation{'s' * (len(same) != 1)}: {kind.rstrip('.')}"
        said += f" ({'lines' if numbered else 'at'} {at})" if at else ""
        rows.append(LineError(same[0].line, said))
    return whole + rows


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
        Warned(at, f"{where_of(p)}{problem.message}", _kind(project, problem), p.get("where", ""))
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
