"""Scoring with a model fine-tuned for the task, on a worker: a transformers classifier
(classification; acceptable or not for minimal pairs, as CoLA's classifiers), an extractive
reader (free text), or a staff member's python callable (either). Each kind gives Prediction
rows; the task type computes the metrics (evaluation/runs/task_types.py)."""

import re
from typing import Any

from annotation.errors import DomainError
from annotation.models import Project
from annotation.text.answers import AnswerRules, answer_text
from evaluation.metrics.answers import ScoredAnswer
from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runners.base import RunnerError
from evaluation.runners.classifier import SequenceClassifier
from evaluation.runners.python import predict_python
from evaluation.runners.qa import ExtractiveQA
from evaluation.runs.scorer import (
    CHECKPOINT,
    Advance,
    Checkpoint,
    ModelKind,
    ScoredPart,
    prediction_row,
)
from evaluation.runs.sources import is_trusted, runner_options
from evaluation.runs.task_types import free_text

Examples = list[dict[str, Any]]
TaskType = Project.TaskType


class Classifier(Checkpoint):
    """A transformers sequence classifier: each example's label and probabilities."""

    name, label = "hf-sequence-classification", "classifier (transformers)"
    task_types = (TaskType.CLASSIFICATION,)
    settings = (*CHECKPOINT, "label_mapping")

    def score(self, run: EvaluationRun, examples: Examples, advance: Advance) -> ScoredPart:
        spec, project = run.model, run.release.project
        fields = [[e["fields"][name] for name in project.field_names] for e in examples]
        model = SequenceClassifier(**runner_options(spec), max_length=spec.max_length)
        _check_mapping(spec, list(model.id2label.values()), project.labels)
        advance(0)  # loading may take a while: show we are alive
        result = model.predict(fields, spec.batch_size, advance)
        return ScoredPart(label_rows(spec, project, examples, result.labels, result.probabilities))


class Reader(Checkpoint):
    """A transformers extractive reader: each question's answer, a span of its context."""

    name, label = "hf-question-answering", "extractive QA (transformers)"
    task_types = (TaskType.FREE_TEXT,)
    settings = (*CHECKPOINT, "stride", "max_answer_tokens")

    def score(self, run: EvaluationRun, examples: Examples, advance: Advance) -> ScoredPart:
        spec, project = run.model, run.release.project
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
        return ScoredPart(answer_rows(project, examples, texts))


class PythonCallable(ModelKind):
    """`package.module:callable` (staff only): a label, or an answer (a text or its spans), for
    each example's fields. It runs in one piece: a stored text cannot give back its spans."""

    name, label = "python", "Python callable (staff)"
    task_types = (TaskType.CLASSIFICATION, TaskType.FREE_TEXT)
    settings = ("label_mapping", "batch_size")
    staff_only = True
    shardable = False

    def clean(self, values: dict[str, Any], *, staff: bool, api_key: str) -> None:
        super().clean(values, staff=staff, api_key=api_key)
        if ":" not in values["source"]:
            raise DomainError("A python model's source is package.module:callable.")

    def score(self, run: EvaluationRun, examples: Examples, advance: Advance) -> ScoredPart:
        spec, project = run.model, run.release.project
        dicts = [e["fields"] for e in examples]
        if not is_trusted(spec):  # asked again on the worker (docs/security.md)
            raise RunnerError("Only staff may run python models; ask staff to register it.")
        result = predict_python(spec.source, dicts, spec.batch_size, advance)
        if project.is_free_text:
            return ScoredPart(answer_rows(project, examples, result.labels))
        return ScoredPart(label_rows(spec, project, examples, result.labels, result.probabilities))


def label_rows(
    spec: ModelSpec,
    project: Any,
    examples: Examples,
    labels: list[str],
    probabilities: list[dict[str, float]],
) -> list[dict[str, Any]]:
    """The rows of a model's labels, through the spec's label_mapping; a label that maps to
    no project label fails the run, naming it."""
    mapping = spec.label_mapping or {}
    predicted = [mapping.get(label, label) for label in labels]
    strays = sorted(set(predicted) - set(project.labels))
    if strays:
        raise DomainError(
            f"The model predicted {', '.join(strays)}, which map to no project label; "
            f"set label_mapping (project labels: {', '.join(project.labels)})."
        )
    return [
        prediction_row(e, label=label, probabilities=probs)
        for e, label, probs in zip(examples, predicted, probabilities, strict=True)
    ]


def qa_fields(project: Any) -> tuple[str, list[str]]:
    """The question field (named "question", else the last one) and the context fields."""
    names = project.field_names
    question = "question" if "question" in names else names[-1]
    return question, [name for name in names if name != question]


def answer_rows(project: Any, examples: Examples, texts: list[Any]) -> list[dict[str, Any]]:
    """Each example's answer (a text, or a multi-span answer's spans) as Prediction fields,
    its EM and F1 against the example's answers by the project's answer rules: for any model
    that answers in words."""
    rules = AnswerRules.of(project)
    rows = []
    for e, text in zip(examples, texts, strict=True):
        predicted = text if isinstance(text, str) else tuple(text)
        scored = ScoredAnswer(
            e["set_id"], e["role"], tuple(e["answers"]), predicted, tuple(e["tags"]), rules
        )
        rows.append(prediction_row(e, output=answer_text(predicted), em=scored.em, f1=scored.f1))
    return rows


def scored_answers(project: Any, examples: Examples, texts: list[Any]) -> tuple[list, dict]:
    """The answers' rows and the QA metrics of the project's task type, at once."""
    rows = answer_rows(project, examples, texts)
    return rows, free_text(project, examples, rows)


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
