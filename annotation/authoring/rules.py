"""The authoring rules (docs/workflows.md), written once: what an edit of a pivot must be. They
return problems, and each workflow decides what a problem does: the editor refuses the
submission (authoring.services.drafts), a set import keeps the edit and warns, or refuses the
file when it is strict (imports.set_checks)."""

from dataclasses import dataclass
from typing import Any

from annotation.models import Project
from annotation.text.answers import AnswerRules, answer_text
from annotation.text.edits import fields_edit_distance, same_text, tokenize


@dataclass(frozen=True)
class Problem:
    field: str  # the input at fault: fields, label or answers
    message: str  # a sentence that starts in lower case, to follow "where: "
    admin_may_allow: bool = False  # a large edit: an admin may allow this one


def edit_problems(
    project: Project,
    original: Any,
    fields: dict[str, str],
    label: str,
    answers: list[Any],
    *,
    allow_large_edit: bool = False,
) -> list[Problem]:
    """The rules an edit (`fields`, with `label` or `answers`) of `original` (anything with
    fields, label and answers) breaks. Every field is compared, whitespace aside; the edit
    ratio is measured over the editable fields."""
    problems = []
    if all(same_text(fields[n], original.fields[n]) for n in project.field_names):
        problems.append(
            Problem("fields", "the edit is identical to its original (whitespace aside).")
        )
    elif all(not tokenize(fields[n]) for n in project.editable_field_names):
        problems.append(Problem("fields", "the edited text is empty."))
    if project.setting("require_label_change"):
        problems += _kept_truth(project, original, label, answers)
    limit = project.setting("max_edit_ratio")
    ratio = fields_edit_distance(original.fields, fields, project.editable_field_names)
    if ratio > limit and not allow_large_edit:
        problems.append(
            Problem(
                "fields",
                f"the edit changes {ratio:.0%} of the tokens; the limit is {limit:.0%}.",
                admin_may_allow=True,
            )
        )
    return problems


def _kept_truth(project: Project, original: Any, label: str, answers: list[Any]) -> list[Problem]:
    if not project.is_free_text:
        if label != original.label:
            return []
        return [Problem("label", f"the label must differ from the original's ({original.label}).")]
    rules = AnswerRules.of(project)
    if not original.answers or not rules.same(answers, original.answers):
        return []
    kept = "; ".join(answer_text(a) for a in original.answers)
    return [
        Problem(
            "answers",
            f"the answers must differ from the original's ({kept}) once normalised by "
            f"{rules.name}'s rules.",
        )
    ]
