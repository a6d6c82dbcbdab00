"""Registering a model spec: which kinds score which project, and who may make a worker load
what (docs/security.md). Each kind's own rules are its methods (evaluation/runs/kinds.py)."""

from typing import Any

from annotation.errors import DomainError
from annotation.models import AuditLog, Project, user_or_none
from annotation.models.config import SPLITS
from annotation.prompting import clean_prompt, clean_verbalizers, prompt_fields
from evaluation.models import ModelSpec
from evaluation.runners.probe import Report
from evaluation.runs.kinds import KINDS, kind_of, kinds_for
from evaluation.runs.scorer import ModelKind

MAX_SHOTS = 32


def model_register(*, project: Project, user: Any, **values: Any) -> ModelSpec:
    clean_label_mapping(project, values.get("label_mapping"))
    staff = bool(getattr(user, "is_staff", False))
    kind = registered_kind(values["kind"], staff=staff)
    api_key = values.pop("api_key", "") or ""
    kind.clean(values, staff=staff, api_key=api_key)
    kinds = kinds_for(project.task_type)
    if kind.name not in kinds:
        raise DomainError(
            f"A {project.task_type} project is scored by {_or(kinds)} models, not {kind.name}.",
            field="kind",
        )
    clean_prompting(project, values)
    if ModelSpec.objects.filter(project=project, name=values["name"]).exists():
        raise DomainError(f"A model named {values['name']!r} exists in this project.")
    kind.check(values, api_key)  # last: the only checks that ask another machine
    trusted = user is None or staff
    spec = ModelSpec.objects.create(
        project=project, created_by=user_or_none(user), trusted=trusted, **values
    )
    AuditLog.record(
        actor=user, action="model_registered", project=project, model=spec.pk, name=spec.name
    )
    return spec


def registered_kind(name: str, *, staff: bool) -> ModelKind:
    """The kind named `name`, if a user may register it: a kind that runs code on the workers
    only staff may (docs/security.md)."""
    kind = KINDS.get(name)
    if kind is None:
        raise DomainError(f"No kind of model is named {name!r}.", field="kind")
    if kind.staff_only and not staff:
        raise DomainError(
            f"Only staff may register {kind.name} models: they run code on the workers.",
            code="forbidden",
            field="kind",
        )
    return kind


def _or(words: list[str]) -> str:
    return " or ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)


def clean_prompting(project: Project, values: dict[str, Any]) -> None:
    """A language model's prompt, verbalizers, shots and stops (docs/prompting.md)."""
    try:
        clean_prompt(
            values.get("prompt", ""), prompt_fields(project.task_type, project.field_names)
        )
    except DomainError as error:
        raise DomainError(error.message, field="prompt") from None
    words = values.get("verbalizers") or {}
    try:  # the model's words over the project's: together, one word per label
        clean_verbalizers(words, project.labels)
        clean_verbalizers({**project.setting("verbalizers"), **words}, project.labels)
    except DomainError as error:
        raise DomainError(error.message, field="verbalizers") from None
    shots, split = values.get("few_shot", 0), values.get("few_shot_split", "")
    if not 0 <= shots <= MAX_SHOTS:
        raise DomainError(f"few_shot must be from 0 to {MAX_SHOTS}.", field="few_shot")
    if shots and split not in SPLITS:
        raise DomainError(
            f"few_shot_split must be one of {', '.join(SPLITS)} to draw shots from.",
            field="few_shot_split",
        )
    stop = values.get("stop", ["\n"])
    if not isinstance(stop, list) or not all(isinstance(s, str) and s for s in stop):
        raise DomainError("stop must be a list of non-empty texts.", field="stop")


def clean_label_mapping(project: Project, mapping: Any) -> None:
    mapping = mapping or {}
    if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
        raise DomainError("label_mapping must map model labels to project labels.")
    unknown = sorted(set(mapping.values()) - set(project.labels))
    if unknown:
        raise DomainError(
            f"label_mapping maps to {', '.join(unknown)}, which are not labels of this project "
            f"({', '.join(project.labels)})."
        )


def model_check(*, spec: ModelSpec) -> Report:
    """The Check of a model on the Models page: a served model's canary requests."""
    return kind_of(spec).probe(spec)
