"""A finished run's results as pages show them: the sets or pairs the model failed, the
confusion matrix, and two runs side by side. Read from its predictions and its release's
bundle; the rules (what is right, what pairs with what) are those of the scoring."""

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from annotation.releases.bundle import read_examples
from annotation.releases.exports import paired
from annotation.text.edits import word_diff
from evaluation.metrics.pairs import ScoredPair
from evaluation.models import EvaluationRun

FAILED_SETS_PER_PAGE = 20

# The figures two runs are compared on, by their names on the page
COMPARED = {
    "original_accuracy": "Accuracy on originals",
    "perturbed_accuracy": "Accuracy on perturbations",
    "drop": "Drop (originals - perturbations)",
    "consistency": "Consistency",
    "macro_f1": "Macro F1",
    "original_em": "Exact match on originals",
    "original_f1": "F1 on originals",
    "perturbed_em": "Exact match on perturbations",
    "perturbed_f1": "F1 on perturbations",
    "pair_accuracy": "Pair accuracy",
    "ties": "Ties",
    "discrepancy": "Discrepancy",
}
# The figures that two runs' paired comparison covers (runs/compare.py)
PAIRED = [key for key in COMPARED if key not in ("ties", "discrepancy")]


def unparsed_notes(pair: list[EvaluationRun]) -> list[dict[str, Any]]:
    """Each run whose generated answers named no label (metrics.unparsed): how many of its
    answers, so that Compare runs says why its figures are low (all 0.0% when none named one)."""
    out = []
    for run in pair:
        unparsed = run.metrics.get("unparsed") or 0
        counts = run.metrics.get("counts", {})
        answers = (counts.get("originals") or 0) + (counts.get("perturbed") or 0)
        if unparsed:
            out.append({"run": run, "unparsed": unparsed, "answers": answers})
    return out


def unparsed_answers(run: EvaluationRun, limit: int = 20) -> list[Any]:
    """The first generated answers of a served run that named no label (label "" with the
    model's text kept), for the run page."""
    return list(run.predictions.filter(label="").exclude(output="").order_by("id")[:limit])


def tag_score(metrics: dict[str, Any], tag: str) -> float | None:
    """A tag's accuracy (labels), or its F1 (free text)."""
    row = metrics["per_tag"].get(tag, {})
    return row.get("accuracy", row.get("f1"))


def comparison(pair: list[EvaluationRun]) -> list[tuple[str, list[float | None]]]:
    """(figure name, each run's value) for the figures either run has, then per tag."""
    shown = {key: name for key, name in COMPARED.items() if any(key in r.metrics for r in pair)}
    rows = [(name, [run.metrics.get(key) for run in pair]) for key, name in shown.items()]
    tags = sorted({tag for run in pair for tag in run.metrics.get("per_tag", {})})
    return rows + [(f"Tag {tag}", [tag_score(run.metrics, tag) for run in pair]) for tag in tags]


def paired_table(
    rows: list[tuple[str, list[float | None]]], paired: dict[str, Any]
) -> list[dict[str, Any]]:
    """The compared rows, each with its paired figure (runs/compare.py) where it has one, its
    difference and interval in percentage points, and the verdict in words."""
    by_name = {name: paired[key] for key, name in COMPARED.items() if key in paired}
    by_name |= {f"Tag {tag}": figure for tag, figure in paired.get("per_tag", {}).items()}
    sets = paired.get("sets")
    return [
        {
            "name": name,
            "values": values,
            "paired": by_name.get(name),
            "difference": points(by_name.get(name, {}).get("difference")),
            "interval": interval_points(
                by_name.get(name, {}).get("interval"), None if name.startswith("Tag ") else sets
            ),
            "verdict": verdict(by_name.get(name)),
        }
        for name, values in rows
    ]


def points(value: float | None, sign: bool = True) -> str:
    """A difference of two percentages, in percentage points, with a minus sign: "-71.4 pp"."""
    if value is None:
        return ""
    text = f"{value * 100:+.1f}" if sign else f"{value * 100:.1f}"
    return text.replace("-", "\u2212") + " pp"


def interval_points(interval: list[float] | None, sets: int | None) -> str:
    """ "[-100.0, -42.9] pp" (minus signs); an interval that is one point says why: every
    bootstrap draw of the sets gave the same difference, as it must with one set."""
    if not interval:
        return ""
    low, high = (points(end).removesuffix(" pp") for end in interval)
    text = f"[{low}, {high}] pp"
    if interval[0] == interval[1]:  # every draw alike: with one set, it cannot be otherwise
        text += (
            f" (no spread; n = {sets} set{'s' if sets != 1 else ''})" if sets else " (no spread)"
        )
    return text


def verdict(figure: dict[str, Any] | None, alpha: float = 0.05) -> str:
    """In words: B higher or lower where the test rejects at `alpha` and the interval excludes
    0; within noise where neither does; and, where they disagree, which says what (with few
    sets McNemar's exact test is the stricter of the two)."""
    if not figure or figure["difference"] is None or figure["p_value"] is None:
        return ""
    interval = figure["interval"]
    holds_zero = bool(interval) and interval[0] <= 0 <= interval[1]
    rejects = figure["p_value"] < alpha
    mcnemar = figure["test"].startswith("McNemar")
    test = "McNemar's exact test" if mcnemar else "the permutation test over sets"
    if not rejects and (holds_zero or not interval):
        return "within noise"
    if not rejects:
        return f"not significant at {alpha:g} by {test}, though the bootstrap interval excludes 0"
    if holds_zero:
        return f"significant at {alpha:g} by {test}, though the bootstrap interval holds 0"
    return "B higher" if figure["difference"] > 0 else "B lower"


def comparison_chart(pair: list[EvaluationRun], rows: list[Any]) -> dict[str, Any]:
    return {
        "figures": [name for name, _ in rows],
        "runs": [
            {"name": f"#{run.pk} {run.model.name}", "values": [v[i] for _, v in rows]}
            for i, run in enumerate(pair)
        ],
    }


def confusion_rows(metrics: dict[str, Any]) -> list[tuple[str, list[tuple[int, float]]]]:
    confusion = metrics.get("confusion") or {}
    rows = []
    for label, counts in zip(confusion.get("labels", []), confusion.get("matrix", []), strict=True):
        total = sum(counts) or 1
        rows.append((label, [(n, n / total) for n in counts]))
    return rows


def _predictions_by_set(run: EvaluationRun) -> dict[str, list[Any]]:
    by_set = defaultdict(list)
    for p in run.predictions.all().order_by("id"):
        by_set[p.set_id].append(p)
    return by_set


def _wrong_pairs(members: list[Any]) -> Iterator[tuple[Any, Any]]:
    for good, bad in paired(members, lambda p: p.gold):
        scored = good.score is not None and bad.score is not None
        if not (scored and ScoredPair(good.set_id, good.score, bad.score).right):
            yield good, bad


def failing_set_ids(run: EvaluationRun) -> list[str]:
    """The sets the model was not consistent on (a member wrong, or a pair), in run order."""
    pairs = run.release.project.task_type == "minimal_pair"
    return [
        set_id
        for set_id, members in _predictions_by_set(run).items()
        if (any(_wrong_pairs(members)) if pairs else any(not p.correct for p in members))
    ]


def failed_pairs(run: EvaluationRun, set_ids: list[str]) -> list[dict[str, Any]]:
    """The wrong pairs of these sets: both variants as a diff, their scores, and the model's
    own output for the set's source."""
    examples = _by_key(run)
    predictions = _predictions_by_set(run)
    out = []
    for set_id in set_ids:
        members = predictions[set_id]
        original = next(p for p in members if p.role == "original")
        for good, bad in _wrong_pairs(members):
            text = examples[good.example, good.role]["fields"]["text"]
            out.append(
                {
                    "set_id": set_id,
                    "tags": examples[bad.example, bad.role]["tags"],
                    "diff": word_diff(text, examples[bad.example, bad.role]["fields"]["text"]),
                    "correct": good.score,
                    "contrastive": bad.score,
                    "output": original.output,
                    "output_score": original.output_score,
                }
            )
    return out


def failed_sets(run: EvaluationRun, project: Any, set_ids: list[str]) -> list[dict[str, Any]]:
    """These sets, with each member's diff and prediction."""
    predictions = _predictions_by_set(run)
    examples = _by_key(run)
    images = [f["name"] for f in project.fields if f.get("kind") == "image_url"]
    out = []
    for set_id in set_ids:
        members = predictions[set_id]
        original = next(p for p in members if p.role == "original")
        base = project.editable_text(examples[original.example, "original"]["fields"])
        rows = []
        for p in members:
            example = examples[p.example, p.role]
            text = project.editable_text(example["fields"])
            diff = [("equal", text)] if p.role == "original" else word_diff(base, text)
            rows.append(
                {
                    "p": p,
                    "diff": diff,
                    "tags": example["tags"],
                    "images": [example["fields"][name] for name in images],
                }
            )
        out.append({"set_id": set_id, "rows": rows})
    return out


def _by_key(run: EvaluationRun) -> dict[tuple[str, str], dict[str, Any]]:
    """The split's examples by (id, role): an original and its perturbation may share an id."""
    return {(e["id"], e["role"]): e for e in read_examples(run.release, run.split)}


def prediction_rows(run: EvaluationRun, failed_only: bool = False) -> Iterator[dict[str, Any]]:
    """One row per scored example, in the release's example order: its id in examples.jsonl,
    its set and role, the gold and the prediction, and what the run's kind adds (the label
    probabilities of a classifier, the log-likelihoods of a prompted language model, EM and F1
    of an answer, the score of a minimal pair). `failed_only`: the members of failed sets."""
    pairs = run.release.project.task_type == "minimal_pair"
    free_text = run.release.project.is_free_text
    predictions = run.predictions.order_by("id")
    if failed_only:
        predictions = predictions.filter(set_id__in=failing_set_ids(run))
    for p in predictions.iterator(chunk_size=2000):
        row: dict[str, Any] = {"example_id": p.example, "set_id": p.set_id, "role": p.role}
        if pairs:
            row |= {"gold": p.gold, "score": p.score, "output": p.output or None}
        elif free_text:
            row |= {
                "gold": p.gold_answers,
                "prediction": p.output,
                "correct": p.correct,
                "em": p.em,
                "f1": p.f1,
            }
        elif p.loglikelihoods:  # a prompted language model
            row |= {
                "gold": p.gold,
                "prediction": p.label,
                "correct": p.correct,
                "loglikelihoods": p.loglikelihoods,
            }
        elif p.output:  # a served model's answer, its label read from the text ("" unparsed)
            row |= {"gold": p.gold, "prediction": p.label, "correct": p.correct, "output": p.output}
        else:
            row |= {
                "gold": p.gold,
                "prediction": p.label,
                "correct": p.correct,
                "probabilities": p.probabilities,
            }
        yield row
