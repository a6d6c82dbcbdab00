"""What a set import checks of each perturbation (docs/workflows.md): its shape, label or
answers and tags (errors), the fields authors may not change (errors, or warnings for a
published set), and the authoring rules a kept edit breaks (warnings)."""

from typing import Any

from annotation.authoring.rules import edit_problems
from annotation.imports.originals import ParsedRow
from annotation.imports.readers import LineError, field_problem
from annotation.models import Project
from annotation.validation.answers import AnswerRules


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
        None, f"{len(wheres)} perturbation(s) edit the read-only field {name!r}, kept as "
        f"published: {shown}.",
    )  # fmt: skip


def alone(sets: list[Any]) -> list[LineError]:
    """One warning for the sets with no perturbation, kept as sets of one (an original alone,
    as NLVR2 publishes some)."""
    ids = [s.original.external_id for s in sets if not s.perturbations]
    if not ids:
        return []
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    return [LineError(None, f"{len(ids)} set(s) have no perturbation, kept as sets of one (an "
                            f"original alone, consistent when it is right): {shown}.")]  # fmt: skip


def where_of(p: dict[str, Any]) -> str:
    """Where a perturbation is in a published file, for messages about one of several."""
    return f"{p['where']}: " if p.get("where") else ""


def rule_warnings(
    project: Project, line: int | None, original: ParsedRow, p: dict[str, Any]
) -> list[LineError]:
    """The authoring rules (authoring.rules) a kept edit breaks, as warnings: an import keeps
    the edit unless it is strict. Gardner et al.'s edits usually, not always, change the label."""
    problems = edit_problems(project, original, p["fields"], p["label"], p.get("answers") or [])
    return [LineError(line, f"{where_of(p)}{problem.message}") for problem in problems]


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
