"""What each task type makes of a run's prediction rows: one `rows -> metrics` function per task
type, the same for every model kind and for a run in one piece or in shards, as
lm-evaluation-harness's tasks own `process_results` and `aggregation` (docs/metrics.md).

The rows say how the model answered, so no kind is named here: a row with `loglikelihoods`
chose a label by log-likelihood (`acc`, `acc_norm`), one with an `output` beside its label
answered in words read as a label (`unparsed`), one with a `score` scored a text (pairs).
"""

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

from annotation.models import Project
from annotation.prompting import Prompting
from annotation.releases.exports import paired
from annotation.text.answers import AnswerRules
from evaluation.metrics.answers import MarkedAnswer, qa_metrics
from evaluation.metrics.contrast import Scored, contrast_metrics, exact_match_by_group
from evaluation.metrics.pairs import ScoredPair, pair_metrics

Rows = list[dict[str, Any]]
Examples = list[dict[str, Any]]
Words = dict[str, str] | None  # a model's verbalizers: label -> its words


def label_metrics(project: Any, examples: Examples, predicted: list[str]) -> dict[str, Any]:
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


def classification(project: Any, examples: Examples, rows: Rows, verbalizers: Words = None) -> dict:
    """The labels' contrast-set metrics; where the model chose by log-likelihood, `acc` and
    `acc_norm` too (by the characters of the labels' words, the model's `verbalizers` over
    the project's); where it answered in words, how many named no label (`unparsed`)."""
    predicted = [row["label"] for row in rows]
    metrics = label_metrics(project, examples, predicted)
    if rows and "loglikelihoods" in rows[0]:
        words = Prompting.of(project, verbalizers=verbalizers).words
        metrics |= choice_accuracy(project, examples, words, rows)
    elif rows and "output" in rows[0]:
        metrics["unparsed"] = predicted.count("")
    return metrics


def choice_accuracy(
    project: Any, examples: Examples, words: tuple[str, ...], rows: Rows
) -> dict[str, Any]:
    """`acc`: the label of the highest log-likelihood is right; `acc_norm`: the same, each
    log-likelihood divided by its words' characters (as the harness: no delimiter)."""
    lengths = np.array([len(word) for word in words], dtype=float)
    right, normed = [], []
    for example, row in zip(examples, rows, strict=True):
        values = np.array([row["loglikelihoods"][label] for label in project.labels])
        right.append(project.labels[int(np.argmax(values))] == example["label"])
        normed.append(project.labels[int(np.argmax(values / lengths))] == example["label"])
    return {
        "acc": float(np.mean(right)) if right else None,
        "acc_norm": float(np.mean(normed)) if normed else None,
    }


def free_text(project: Any, examples: Examples, rows: Rows, verbalizers: Words = None) -> dict:
    """The QA metrics of the rows' EM and F1, by the project's answer rules (its official
    variant), which are recorded with them."""
    rules = AnswerRules.of(project)
    marked = [
        MarkedAnswer(e["set_id"], e["role"], row["em"], row["f1"], tuple(e["tags"]))
        for e, row in zip(examples, rows, strict=True)
    ]
    recorded = {"normalization": rules.normalization, "consistency": rules.consistency}
    return {**qa_metrics(marked, rules=rules), "answer_rules": recorded}


def minimal_pair(project: Any, examples: Examples, rows: Rows, verbalizers: Words = None) -> dict:
    """The pair metrics of the texts' scores, with each set's own-output score (on its
    original's row); a classifier's acceptable-or-not labels have the labels' metrics."""
    if not (rows and "score" in rows[0]):
        return classification(project, examples, rows, verbalizers)
    own = {
        row["set_id"]: {"output": row["output"], "output_score": row["output_score"]}
        for row in rows
        if row["role"] == "original" and row.get("output_score") is not None
    }
    return pair_metrics(pairs_of(examples, [row["score"] for row in rows], own))


def pairs_of(
    examples: Examples, scores: list[float], own: dict[str, dict[str, Any]]
) -> list[ScoredPair]:
    """Every pair of every set: the member labelled acceptable against each member labelled
    unacceptable; each pair carries the unacceptable member's tags and the set's own-output
    score."""
    members: dict[str, list[tuple[dict[str, Any], float]]] = defaultdict(list)
    for e, score in zip(examples, scores, strict=True):
        members[e["set_id"]].append((e, score))
    return [
        ScoredPair(set_id, good, bad, tuple(e["tags"]), own.get(set_id, {}).get("output_score"))
        for set_id, rows in members.items()
        for (_, good), (e, bad) in paired(rows, lambda row: row[0]["label"])
    ]


Type = Project.TaskType
METRICS: dict[str, Callable[[Any, Examples, Rows, Words], dict[str, Any]]] = {
    Type.CLASSIFICATION: classification,
    Type.FREE_TEXT: free_text,
    Type.MINIMAL_PAIR: minimal_pair,
}


def task_metrics(project: Any, examples: Examples, rows: Rows, verbalizers: Words = None) -> dict:
    """The run's metrics, by its project's task type, from its rows in the release's order."""
    return METRICS[project.task_type](project, examples, rows, verbalizers)
