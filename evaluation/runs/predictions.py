"""Runs from a predictions file (docs/workflows.md): a published model's outputs for a release
split, scored like any run. No code runs, so project admins may do it, not only staff.

The file is a JSON object from example id to prediction, or JSON Lines of {"id", "prediction"}
with "role" ("original" or "perturbed") where an original and its perturbation share an id.
A prediction is a label (classification) or an answer (free text). Ids that the split does not
hold are refused with their line; examples without a prediction count as wrong and are listed.
"""

from pathlib import Path
from typing import Any

from django.conf import settings

from annotation.errors import ImportRejected
from annotation.imports.readers import LineError, decode, read_jsonl, resolve_label
from annotation.models import Project
from annotation.text.parsing import strict_json_loads
from evaluation.models import EvaluationRun
from evaluation.runs.scorer import Advance, ModelKind, ScoredPart, prediction_row
from evaluation.runs.scoring import answer_rows

ROLES = ("original", "perturbed")
MISSING_LISTED = 100
Key = tuple[str, str | None]  # an example's id and role
Predicted = str | list[str]  # a label, an answer, or the spans of a multi-span answer


def read_predictions(
    project: Project, examples: list[dict[str, Any]], data: bytes
) -> dict[Key, Predicted]:
    """(example id, role) -> prediction, or ImportRejected with every bad line."""
    text = decode(data)
    entries: list[tuple[int | None, Any]] = []
    whole: Any = None
    if text.lstrip().startswith("{") and "\n{" not in text.strip():
        try:
            whole = strict_json_loads(text)
        except ValueError:
            whole = None
    if isinstance(whole, dict) and not {"id", "prediction"} <= set(whole):
        entries = [(None, {"id": key, "prediction": value}) for key, value in whole.items()]
    else:
        entries = list(read_jsonl(text))
    roles: dict[str, list[str]] = {}
    for e in examples:
        roles.setdefault(e["id"], []).append(e["role"])
    out: dict[Key, Predicted] = {}
    errors: list[LineError] = []
    for line, entry in entries:
        if isinstance(entry, LineError):
            errors.append(entry)
            continue
        problem, key, value = _entry(project, entry, roles)
        if problem is None and key in out:
            problem = f"a second prediction for {key[0]!r}."
        if problem:
            where = f"id {entry.get('id')!r}: " if line is None else ""
            errors.append(LineError(line, where + problem))
        else:
            out[key] = value
    if not out and not errors:
        errors.append(LineError(None, "the file holds no predictions."))
    if errors:
        raise ImportRejected(errors)
    return out


def _entry(
    project: Project, entry: dict[str, Any], roles: dict[str, list[str]]
) -> tuple[str | None, Key, Predicted]:
    """What is wrong with one prediction, or None; its example's (id, role); its value."""
    example_id, value, role = entry.get("id"), entry.get("prediction"), entry.get("role")
    key: Key = (str(example_id), role)
    if not isinstance(example_id, str | int) or isinstance(example_id, bool):
        return "each prediction needs an id.", key, ""
    if role is not None and role not in ROLES:
        return f"role must be {' or '.join(ROLES)}.", key, ""
    held = roles.get(key[0], [])
    if not held or (role is not None and role not in held):
        return f"unknown id {key[0]!r}: no such example in this split.", key, ""
    if role is None and len(held) > 1:
        return f"an original and its perturbation share id {key[0]!r}: give a role.", key, ""
    key = (key[0], role or held[0])
    if project.is_free_text:
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return None, key, value if len(value) > 1 else value[0]  # a multi-span answer
        if not isinstance(value, str):
            return "a prediction is an answer: text, or a list of spans.", key, ""
        return None, key, value
    label = resolve_label(str(value), project.labels, {}) if isinstance(value, str) else None
    if label is None:
        return f"prediction {value!r} is not a label ({', '.join(project.labels)}).", key, ""
    return None, key, label


class PredictionsFile(ModelKind):
    """A file of a model's outputs: its rows as any run of the project's task type has them,
    and the examples it left out (`missing`, counted wrong). It is read whole: no shards.
    Registered by its upload (evaluation/runs/services.py), never on the Models page."""

    name, label = "predictions", "predictions file"
    on_page = False
    shardable = False

    def score(
        self, run: EvaluationRun, examples: list[dict[str, Any]], advance: Advance
    ) -> ScoredPart:
        project = run.release.project
        data = (Path(settings.MEDIA_ROOT) / run.model.source).read_bytes()
        given = read_predictions(project, examples, data)
        texts: list[Any] = []
        missing = []
        for e in examples:
            value = given.get((e["id"], e["role"]))
            if value is None:
                missing.append(e["id"])
            texts.append(value or "")
        advance(len(examples))
        if project.is_free_text:
            rows = answer_rows(project, examples, texts)
        else:
            rows = [
                prediction_row(e, label=label) for e, label in zip(examples, texts, strict=True)
            ]
        return ScoredPart(
            rows, {"missing": {"count": len(missing), "ids": missing[:MISSING_LISTED]}}
        )
