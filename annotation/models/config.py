"""Validation of a project's configuration: input schema, labels, tags and settings.

Plain functions over plain data, shared by the API, the pages and the Django admin.
"""

from typing import Any

from annotation.errors import DomainError
from annotation.prompting import NAME_RE, clean_prompt, clean_verbalizers

SPLITS = ("train", "dev", "test")
# Bounds of numbers people type: beyond them is a mistake, and beyond PostgreSQL's integer.
MAX_SECONDS_SPENT = 7 * 24 * 60 * 60
MAX_TAG_TARGET = 1_000_000


def clean_seconds_spent(value: Any) -> int:
    """The seconds a client says an edit or a vote took, checked the one way for both."""
    try:
        seconds = int(value or 0)
    except (TypeError, ValueError):
        seconds = -1
    if not 0 <= seconds <= MAX_SECONDS_SPENT:
        raise DomainError(
            f"seconds_spent must be a whole number from 0 to {MAX_SECONDS_SPENT}.",
            field="seconds_spent",
        )
    return seconds


FIELD_KINDS = ("text", "html", "image_url")
# Column names the importer reserves for the example itself.
RESERVED_FIELD_NAMES = {"id", "label", "split", "metadata"}

DEFAULT_SETTINGS: dict[str, Any] = {
    "votes_per_item": 5,
    "majority": 3,
    "release_min_agreement": 3,
    "validator_min_votes": 20,
    "validator_max_disagreement": 0.8,
    "claim_ttl": 2 * 60 * 60,
    "lease_ttl": 10 * 60,
    "max_perturbations_per_pivot": 5,
    "max_edit_ratio": 0.5,
    "require_label_change": True,
    "control_rate": 0.1,
    # Free-text projects: the token F1 at which a validator's answer matches another.
    "answer_match_f1": 0.8,
    # Prompted language models (docs/prompting.md): a template over the fields ("" is
    # default_prompt), and what each label is called after it (default: the label itself).
    "prompt": "",
    "verbalizers": {},
    # Free-text scoring's official variants (docs/metrics.md): answer normalisation (SQuAD's,
    # ROPES's, which keeps articles, or DROP's own metric, numbers as numbers and multi-span
    # answers matched span by span), and what makes a member right for consistency (F1 above
    # 0.8, or an exact match).
    "answer_normalization": "squad",
    "answer_consistency": "f1",
    # Classification: a field whose equal values make one question (MC-TACO's candidates of
    # one question); runs then report exact match by question beside the per-row figures.
    "em_by_field": "",
    # Crowd validation (docs/validation.md, "Validation with a crowd"): a qualification test
    # of this many items drawn from the gold pool (plus the admin's comprehension questions),
    # the share to get right and the attempts allowed; gold items mixed in at gold_rate, and
    # the running gold accuracy below which a validator is paused, after gold_min_count.
    "qualification_items": 0,
    "qualification_min_accuracy": 0.8,
    "qualification_attempts": 1,
    "qualification_questions": [],
    "gold_rate": 0.0,
    "gold_min_accuracy": 0.7,
    "gold_min_count": 5,
    "items_per_participant": 20,
}
CHOICE_SETTINGS = {
    "answer_normalization": ("squad", "ropes", "drop"),
    "answer_consistency": ("f1", "em"),
}
INT_SETTINGS = {
    "votes_per_item": (1, 25),
    "majority": (1, 25),
    "validator_min_votes": (1, 1_000_000),
    "claim_ttl": (60, 30 * 24 * 3600),
    "lease_ttl": (10, 24 * 3600),
    "max_perturbations_per_pivot": (1, 1000),
    "qualification_items": (0, 100),
    "qualification_attempts": (1, 10),
    "gold_min_count": (1, 10_000),
    "items_per_participant": (1, 10_000),
}
FRACTION_SETTINGS = (
    "validator_max_disagreement",
    "max_edit_ratio",
    "control_rate",
    "answer_match_f1",
    "qualification_min_accuracy",
    "gold_rate",
    "gold_min_accuracy",
)


# Settings whose values hold right answers: answered to the project's admins alone.
ANSWER_KEYS = ("label", "answers")


def settings_without_answers(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings as members who are not admins read them (docs/security.md): the
    qualification test's questions without their right label or answers, which a validator
    who must still take the test would otherwise read from the project's API answer."""
    questions = [
        {k: v for k, v in q.items() if k not in ANSWER_KEYS}
        for q in settings.get("qualification_questions", [])
    ]
    return {**settings, "qualification_questions": questions}


def clean_fields(fields: Any) -> list[dict[str, Any]]:
    if not isinstance(fields, list) or not fields:
        raise DomainError("fields must be a non-empty list of {name, kind, editable}.")
    cleaned, seen = [], set()
    for position, field in enumerate(fields, start=1):
        if not isinstance(field, dict) or not isinstance(field.get("name"), str):
            raise DomainError(f"field {position} must be an object with a name.")
        name = field["name"]
        if not NAME_RE.match(name):
            raise DomainError(
                f"field name {name!r} must start with a letter and hold only letters, digits, "
                "'_' or '-'."
            )
        if name in RESERVED_FIELD_NAMES:
            raise DomainError(f"field name {name!r} is reserved.")
        if name in seen:
            raise DomainError(f"field name {name!r} appears twice.")
        kind = field.get("kind", "text")
        if kind not in FIELD_KINDS:
            raise DomainError(f"field {name!r} has unknown kind {kind!r}.")
        editable = field.get("editable", True)
        if not isinstance(editable, bool):
            raise DomainError(f"field {name!r}: editable must be true or false.")
        seen.add(name)
        cleaned.append({"name": name, "kind": kind, "editable": editable})
    if not any(f["editable"] for f in cleaned):
        raise DomainError("at least one field must be editable.")
    return cleaned


def default_edit_limit(task_type: str, fields: list[dict[str, Any]]) -> float:
    """The edit limit (`max_edit_ratio`) of a new project that states none. The limit is
    measured over the editable fields alone: a free-text project whose passage is read-only
    (Quoref's, DROP's, BoolQ's setup) measures it over its questions, which published experts
    often rewrite whole (Quoref's up to 96%: 271 of its 700 edits exceed 0.5), so there it is off
    (1.0), as in those datasets' templates; elsewhere DEFAULT_SETTINGS' 0.5."""
    if task_type == "free_text" and not all(f["editable"] for f in fields):
        return 1.0
    return float(DEFAULT_SETTINGS["max_edit_ratio"])


MINIMAL_PAIR_LABELS = ["acceptable", "unacceptable"]


def check_minimal_pair(fields: list[dict[str, Any]], labels: list[str]) -> None:
    """docs/task-types.md: labels acceptable/unacceptable; an editable `text` and an optional
    read-only `source` (e.g. the sentence being translated)."""
    if labels != MINIMAL_PAIR_LABELS:
        raise DomainError("a minimal_pair project's labels are acceptable, unacceptable.")
    kinds = {f["name"]: f["editable"] for f in fields}
    if kinds.get("text") is not True or set(kinds) - {"text", "source"}:
        raise DomainError(
            "a minimal_pair project has an editable text field and an optional source field."
        )
    if kinds.get("source", False):
        raise DomainError("a minimal_pair project's source field is read-only.")


def clean_labels(
    labels: Any, extra_labels: Any, free_text: bool = False
) -> tuple[list[str], list[str]]:
    """Free-text projects (docs/task-types.md) have no task labels, only extra ones
    (unanswerable)."""
    for name, value in (("labels", labels), ("extra_labels", extra_labels)):
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise DomainError(f"{name} must be a list of non-empty strings.")
    if free_text and labels:
        raise DomainError(
            "a free_text project has no labels (examples carry answers); use extra_labels "
            "for responses such as unanswerable."
        )
    if not free_text and len(labels) < 2:
        raise DomainError("labels must hold at least two labels.")
    everything = labels + extra_labels
    duplicates = sorted({label for label in everything if everything.count(label) > 1})
    if duplicates:
        raise DomainError(f"labels repeat: {', '.join(duplicates)}.")
    if len(everything) > 9:
        # Keys 1-9 pick labels in the editor and the validation page.
        raise DomainError("at most 9 labels and extra labels in all.")
    return labels, extra_labels


def clean_settings(settings: Any) -> dict[str, Any]:
    if settings is None:
        settings = {}
    if not isinstance(settings, dict):
        raise DomainError("settings must be an object.")
    unknown = sorted(set(settings) - set(DEFAULT_SETTINGS))
    if unknown:
        raise DomainError(f"unknown settings: {', '.join(unknown)}.")
    merged = {**DEFAULT_SETTINGS, **settings}
    for key, (low, high) in INT_SETTINGS.items():
        value = merged[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise DomainError(f"{key} must be an integer from {low} to {high}.")
    for key in FRACTION_SETTINGS:
        value = merged[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise DomainError(f"{key} must be a number from 0 to 1.")
    for key, choices in CHOICE_SETTINGS.items():
        if merged[key] not in choices:
            raise DomainError(f"{key} must be one of {', '.join(choices)}.")
    merged["qualification_questions"] = clean_questions(merged["qualification_questions"])
    clean_prompt(merged["prompt"])
    clean_verbalizers(merged["verbalizers"])
    if not isinstance(merged["em_by_field"], str):
        raise DomainError("em_by_field must be a field's name, or empty.")
    if not isinstance(merged["require_label_change"], bool):
        raise DomainError("require_label_change must be true or false.")
    if not merged["votes_per_item"] / 2 < merged["majority"] <= merged["votes_per_item"]:
        raise DomainError("majority must be more than half of votes_per_item, and at most it.")
    merged["release_min_agreement"] = _clean_min_agreement(
        merged["release_min_agreement"], merged["votes_per_item"]
    )
    return merged


def _clean_min_agreement(value: Any, votes_per_item: int) -> int | dict[str, int]:
    """An integer for every split, or a per-split mapping such as {"test": 4}."""
    values = value.values() if isinstance(value, dict) else [value]
    if isinstance(value, dict) and set(value) - set(SPLITS):
        raise DomainError(f"release_min_agreement splits must be among {', '.join(SPLITS)}.")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= votes_per_item:
            raise DomainError(
                f"release_min_agreement must be from 1 to votes_per_item ({votes_per_item})."
            )
    return value


MAX_QUESTIONS = 50


def clean_questions(questions: Any) -> list[dict[str, Any]]:
    """The admin's comprehension questions: items with their right response, each
    {"fields": {name: text}, "label": ...} or, in free-text projects, {"fields", "answers"}.
    Their fields and labels are checked against the project by the crowd module, which knows
    the project; here only their shape."""
    if not isinstance(questions, list) or len(questions) > MAX_QUESTIONS:
        raise DomainError(f"qualification_questions must be a list of at most {MAX_QUESTIONS}.")
    for n, question in enumerate(questions, start=1):
        ok = isinstance(question, dict) and isinstance(question.get("fields"), dict)
        ok = ok and all(isinstance(v, str) for v in question["fields"].values())
        ok = ok and set(question) <= {"fields", "label", "answers"}
        ok = ok and isinstance(question.get("label", ""), str)
        answers = question.get("answers", []) if ok else None
        ok = ok and isinstance(answers, list) and all(isinstance(a, str) for a in answers)
        if not ok or not (question.get("label") or answers):
            raise DomainError(
                f'qualification question {n} must be {{"fields": {{name: text}}, '
                '"label": ...} or {"fields": ..., "answers": [...]}.'
            )
    return questions


def check_questions(
    questions: list[dict[str, Any]], field_names: list[str], labels: list[str]
) -> None:
    """Each comprehension question fills the project's fields and answers with one of its
    labels (or, in free-text projects, with answers or an extra label). A label is matched
    regardless of case and surrounding spaces ("Positive" for "positive"), and the question
    is changed to the project's spelling, which is what gets stored."""
    spelling = _spellings(labels)
    for n, question in enumerate(questions, start=1):
        unknown = sorted(set(question["fields"]) - set(field_names))
        if unknown or not any(question["fields"].values()):
            raise DomainError(
                f"qualification question {n} must fill the fields {', '.join(field_names)}"
                + (f"; it names {', '.join(unknown)}." if unknown else ".")
            )
        label = question.get("label", "")
        if label and label not in labels:
            if label.strip().casefold() not in spelling:
                raise DomainError(
                    f"qualification question {n}: {label!r} is not one of {', '.join(labels)}."
                )
            question["label"] = spelling[label.strip().casefold()]


def _spellings(labels: list[str]) -> dict[str, str]:
    """Each label by its case-folded form, where no other label folds to the same."""
    folded = [label.strip().casefold() for label in labels]
    return {f: label for f, label in zip(folded, labels, strict=True) if folded.count(f) == 1}
