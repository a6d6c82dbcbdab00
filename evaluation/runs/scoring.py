"""Scoring a classification or free-text split on a worker: the model's predictions, as
Prediction fields, and the split's metrics (docs/metrics.md)."""

import re
from typing import Any

from annotation.errors import DomainError
from annotation.models import Release
from annotation.text.answers import AnswerRules, answer_text
from evaluation.metrics.answers import ScoredAnswer, qa_metrics
from evaluation.metrics.contrast import Scored, contrast_metrics, exact_match_by_group
from evaluation.models import ModelSpec
from evaluation.runners.classifier import SequenceClassifier
from evaluation.runners.python import predict_python
from evaluation.runners.qa import ExtractiveQA
from evaluation.specs.services import runner_options, source_to_load


def prediction_row(example: dict[str, Any], **values: Any) -> dict[str, Any]:
    """A Prediction's fields for one released example: which example, its set and role, its
    gold (a label, or the answers of a free-text project), and the model's `values`."""
    return {
        "example": example["id"],
        "set_id": example["set_id"],
        "role": example["role"],
        "gold": example.get("label") or "",
        "gold_answers": example.get("answers") or [],
        **values,
    }


def run_classifier(
    spec: ModelSpec, release: Release, examples: list[dict[str, Any]], advance: Any
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Predictions (as Prediction fields) and contrast-set metrics of a classifier."""
    project = release.project
    fields = [[e["fields"][name] for name in project.field_names] for e in examples]
    if spec.kind == ModelSpec.Kind.PYTHON:
        dicts = [e["fields"] for e in examples]
        result = predict_python(source_to_load(spec), dicts, spec.batch_size, advance)
    else:
        model = SequenceClassifier(**runner_options(spec), max_length=spec.max_length)
        _check_mapping(spec, list(model.id2label.values()), project.labels)
        advance(0)  # loading may take a while: show we are alive
        result = model.predict(fields, spec.batch_size, advance)
    mapping = spec.label_mapping or {}
    predicted = [mapping.get(label, label) for label in result.labels]
    strays = sorted(set(predicted) - set(project.labels))
    if strays:
        raise DomainError(
            f"The model predicted {', '.join(strays)}, which map to no project label; "
            f"set label_mapping (project labels: {', '.join(project.labels)})."
        )
    rows = [
        prediction_row(e, label=label, probabilities=probs)
        for e, label, probs in zip(examples, predicted, result.probabilities, strict=True)
    ]
    return rows, label_metrics(project, examples, predicted)


def label_metrics(project: Any, examples: list[dict[str, Any]], predicted: list[str]) -> dict:
    """The contrast-set metrics of predicted labels, for any model that picks a label; with
    exact match by question where the project names the question's field (em_by_field)."""
    scored = [
        Scored(e["set_id"], e["role"], e["label"], label, tuple(e["tags"]))
        for e, label in zip(examples, predicted, strict=True)
    ]
    metrics = contrast_metrics(scored, project.labels)
    # Every prediction one label, where the gold has several: a model that does not read its
    # input (an untrained head, a wrong label mapping) looks like this; the run page says so.
    if len(set(predicted)) == 1 and len({e["label"] for e in examples}) > 1:
        metrics["one_label"] = predicted[0]
    if field := project.setting("em_by_field"):
        groups = [e["fields"][field] for e in examples]
        metrics["exact_match_by_question"] = exact_match_by_group(scored, groups)
    return metrics


def qa_fields(project: Any) -> tuple[str, list[str]]:
    """The question field (named "question", else the last one) and the context fields."""
    names = project.field_names
    question = "question" if "question" in names else names[-1]
    return question, [name for name in names if name != question]


def run_reader(
    spec: ModelSpec, release: Release, examples: list[dict[str, Any]], advance: Any
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Predictions and QA metrics of a model that answers: python, or extractive QA."""
    project = release.project
    if spec.kind == ModelSpec.Kind.PYTHON:
        dicts = [e["fields"] for e in examples]
        texts = predict_python(source_to_load(spec), dicts, spec.batch_size, advance).labels
    else:
        question, context = qa_fields(project)
        model = ExtractiveQA(
            **runner_options(spec),
            max_length=spec.max_length,
            stride=spec.stride,
            max_answer_tokens=spec.max_answer_tokens,
        )
        advance(0)  # loading may take a while: show we are alive
        texts = model.predict(
            [e["fields"][question] for e in examples],
            ["\n".join(e["fields"][name] for name in context) for e in examples],
            spec.batch_size,
            advance,
        ).texts
    return scored_answers(project, examples, texts)


def scored_answers(
    project: Any, examples: list[dict[str, Any]], texts: list[Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Each example's answer as Prediction fields (EM and F1 against its answers), and the
    QA metrics, by the project's official variant: for any model that answers in words."""
    rules = AnswerRules.of(project)
    scored = [
        ScoredAnswer(
            e["set_id"],
            e["role"],
            tuple(e["answers"]),
            text if isinstance(text, str) else tuple(text),
            tuple(e["tags"]),
            rules,
        )
        for e, text in zip(examples, texts, strict=True)
    ]
    rows = [
        prediction_row(e, output=answer_text(s.predicted), em=s.em, f1=s.f1)
        for e, s in zip(examples, scored, strict=True)
    ]
    recorded = {"normalization": rules.normalization, "consistency": rules.consistency}
    return rows, {**qa_metrics(scored, rules=rules), "answer_rules": recorded}


def _check_mapping(spec: ModelSpec, model_labels: list[str], project_labels: list[str]) -> None:
    mapping = spec.label_mapping or {}
    unknown = sorted(set(mapping) - set(model_labels))
    if unknown:
        raise DomainError(
            f"label_mapping names {', '.join(unknown)}, which the model does not have "
            f"(it has {', '.join(model_labels)})."
        )
    unmapped = [m for m in model_labels if mapping.get(m, m) not in project_labels]
    if unmapped:
        # LABEL_0, LABEL_1, ...: transformers' names where a config names none, as a checkpoint
        # never trained as a classifier has.
        unnamed = all(re.fullmatch(r"LABEL_\d+", m) for m in model_labels)
        hint = (
            " Its config names no labels (LABEL_0, ... are transformers' defaults): check that "
            "it was trained for this task, and which index means which label."
            if unnamed
            else ""
        )
        raise DomainError(
            f"The model's labels {', '.join(unmapped)} do not map to project labels "
            f"({', '.join(project_labels)}); set label_mapping.{hint}"
        )
