"""Two runs compared with paired statistics (docs/metrics.md, "Comparing two runs"): the runs
checked, their predictions read as outcomes by the run's own rules (what is right, which
pairs a minimal-pair set holds, each perturbation's tags from the release), and the pure
comparison of evaluation/metrics/comparison.py, with what the observed discordance says about
the release's power (annotation/releases/power.py)."""

from collections import defaultdict
from typing import Any

from annotation.errors import DomainError
from annotation.releases.bundle import read_examples
from annotation.releases.exports import paired
from annotation.releases.power import CHOSEN_DIFFERENCE, power_figures
from annotation.text.parsing import parse_id
from evaluation.access import admin_run
from evaluation.metrics.comparison import Outcome, compare_runs
from evaluation.metrics.pairs import ScoredPair
from evaluation.models import EvaluationRun, Prediction


def runs_to_compare(user: Any, raw: str | None) -> tuple[EvaluationRun, EvaluationRun]:
    """The two runs of `runs=<id>,<id>`: 404 for a run `user` does not administer; refused
    unless both succeeded on the same release and split."""
    ids = [parse_id(part.strip()) for part in (raw or "").split(",")]
    if len(ids) != 2 or None in ids:
        raise DomainError("runs must be two run ids, e.g. runs=12,15.", field="runs")
    a, b = (admin_run(user, pk or 0) for pk in ids)
    if a.pk == b.pk:
        raise DomainError(f"runs={raw} names run #{a.pk} twice: compare two runs.", field="runs")
    for run in (a, b):
        if run.status != EvaluationRun.Status.SUCCEEDED:
            raise DomainError(
                f"Run #{run.pk} is {run.status}: only succeeded runs compare.", field="runs"
            )
    if a.release_id != b.release_id or a.split != b.split:
        raise DomainError(
            f"Run #{a.pk} scored release {a.release.version} ({a.split}) and run #{b.pk} "
            f"release {b.release.version} ({b.split}): paired figures need the same release "
            "and split.",
            field="runs",
        )
    return a, b


def kind_of(run: EvaluationRun) -> str:
    project = run.release.project
    if project.task_type == project.TaskType.MINIMAL_PAIR:
        return "pairs"
    return "answers" if project.is_free_text else "labels"


def _pair_outcomes(predictions: list[Prediction], tags: dict[Any, list[str]]) -> list[Outcome]:
    """Each pair of each set, right as the run's pair accuracy counts it (scored, and the
    acceptable variant strictly above), with the unacceptable member's tags."""
    by_set: dict[str, list[Prediction]] = defaultdict(list)
    for p in predictions:
        by_set[p.set_id].append(p)
    out = []
    for set_id, members in by_set.items():
        for good, bad in paired(members, lambda p: p.gold):
            scored = good.score is not None and bad.score is not None
            right = scored and ScoredPair(set_id, good.score, bad.score).right  # type: ignore[arg-type]
            key = (good.example, good.role, bad.example, bad.role)
            bad_tags = tuple(tags.get((bad.example, bad.role), ()))
            out.append(Outcome(key, set_id, "perturbed", right, bad_tags))
    return out


def outcomes_of(run: EvaluationRun, kind: str) -> list[Outcome]:
    """A run's predictions as outcomes, `right` by Prediction.correct (the run's own rule)."""
    tags = {(e["id"], e["role"]): e["tags"] for e in read_examples(run.release, run.split)}
    predictions = list(run.predictions.order_by("id"))
    for p in predictions:
        p.run = run  # Prediction.correct reads the run's answer rules
    if kind == "pairs":
        return _pair_outcomes(predictions, tags)
    return [
        Outcome(
            (p.example, p.role),
            p.set_id,
            p.role,
            p.correct,
            tuple(tags.get((p.example, p.role), ())),
            p.gold,
            p.label,
            p.em,
            p.f1,
        )
        for p in predictions
    ]


def run_comparison(a: EvaluationRun, b: EvaluationRun) -> dict[str, Any]:
    """compare_runs over the two runs' outcomes, and the power its discordance gives."""
    kind = kind_of(a)
    labels = a.release.project.labels if all("macro_f1" in r.metrics for r in (a, b)) else []
    first, second = outcomes_of(a, kind), outcomes_of(b, kind)
    if not first:
        raise DomainError(f"Run #{a.pk} holds no scored example.", field="runs")
    try:
        out = compare_runs(first, second, kind=kind, labels=labels)
    except ValueError as error:
        raise DomainError(f"Runs #{a.pk} and #{b.pk}: {error}", field="runs") from error
    consistency = out["consistency"]
    observed = abs(consistency["difference"] or 0.0)
    out["power"] = power_figures(
        out["sets"],
        discordance=out["discordance"],
        difference=observed or CHOSEN_DIFFERENCE,
        consistency=sum(consistency["values"]) / 2,
    )
    return {"runs": [a.pk, b.pk], "kind": kind, **out}
