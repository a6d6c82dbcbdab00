"""Running an analysis on a worker (docs/analyses.md): gather plain data from the database or
the release bundle, call the pure functions of evaluation.analyses, store the result."""

from collections import defaultdict
from typing import Any

import numpy as np

from annotation import jobs
from annotation.models import Release
from annotation.releases.bundle import read_examples, read_sets
from evaluation.analyses import artifacts, inoculation, instability
from evaluation.models import Analysis, ModelSpec, Prediction
from evaluation.runners.base import RunnerError
from evaluation.runners.trainer import ClassifierTrainer
from evaluation.runs.sources import runner_options

Kind = Analysis.Kind


def run_analysis(analysis_id: int) -> Analysis | None:
    return jobs.execute(Analysis, analysis_id, _work, expected=(RunnerError,))


def _work(analysis: Analysis) -> dict[str, Any]:
    work = {
        Kind.INSTABILITY.value: run_instability,
        Kind.ARTIFACTS.value: run_artifacts,
        Kind.INOCULATION.value: run_inoculation,
    }[analysis.kind]
    return {"result": work(analysis)}


def _progress(analysis: Analysis, total: int) -> Any:
    Analysis.objects.filter(pk=analysis.pk).update(total=total)
    done = 0

    def advance(n: int = 1) -> None:
        nonlocal done
        done += n
        jobs.heartbeat(analysis, done=done)

    return advance


def run_instability(analysis: Analysis) -> dict[str, Any]:
    ids = analysis.params["runs"]
    advance = _progress(analysis, len(ids))
    per_run: list[dict[tuple[str, str], Any]] = []
    for run_id in ids:
        rows = Prediction.objects.filter(run_id=run_id).values_list(
            "example", "set_id", "role", "gold", "label"
        )
        # Keyed with the role: an original and its perturbation may share an id.
        per_run.append(
            {
                (example, role): (set_id, role, gold == label)
                for example, set_id, role, gold, label in rows
            }
        )
        advance()
    examples = sorted(set.intersection(*(set(run) for run in per_run)))
    result: dict[str, Any] = {"runs": ids}
    for role, name in (("original", "original"), ("perturbed", "perturbed")):
        units = [e for e in examples if per_run[0][e][1] == role]
        result[name] = instability.decompose(
            np.array([[run[e][2] for e in units] for run in per_run])
        )
    sets = sorted({per_run[0][e][0] for e in examples})
    consistent = []
    for run in per_run:
        right: dict[str, bool] = defaultdict(lambda: True)
        for e in examples:
            right[run[e][0]] &= run[e][2]
        consistent.append([right[s] for s in sets])
    result["consistency"] = instability.decompose(np.array(consistent))
    return result


def run_artifacts(analysis: Analysis) -> dict[str, Any]:
    release = Release.objects.select_related("project").get(pk=analysis.params["release"])
    project = release.project
    advance = _progress(analysis, 1)
    edits = []
    for record in read_sets(release):
        if record.split != analysis.params["split"]:
            continue
        original = project.editable_text(record.original["fields"])
        for p in record.perturbations:
            text = project.editable_text(p["fields"])
            edits.append(artifacts.Edit(original, text, p["label"], p.get("author", "")))
    result = artifacts.artifacts(edits, len(project.labels))
    advance()
    return result


def run_inoculation(analysis: Analysis) -> dict[str, Any]:
    p = analysis.params
    release = Release.objects.select_related("project").get(pk=p["release"])
    spec = ModelSpec.objects.get(pk=p["model"])
    project = release.project

    def texts(examples: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
        return [project.editable_text(e["fields"]) for e in examples], [
            e["label"] for e in examples
        ]

    test = read_examples(release, "test")
    original = texts([e for e in test if e["role"] == "original"])
    contrast = texts([e for e in test if e["role"] == "perturbed"])
    dev = texts([e for e in read_examples(release, "dev") if e["role"] == "original"])
    pool = read_examples(release, p["pool_split"])
    subsets = inoculation.nested_pool(sorted({e["set_id"] for e in pool}), p["sizes"], p["seed"])
    trainer = ClassifierTrainer(
        **runner_options(spec),
        label_mapping=spec.label_mapping or {},
        max_length=spec.max_length,
        batch_size=min(spec.batch_size, 16),
    )
    advance = _progress(analysis, 1 + len(p["sizes"]) * len(p["learning_rates"]))

    def evaluate(dev_accuracy: float | None = None) -> dict[str, float]:
        return {
            "original_accuracy": trainer.accuracy(*original),
            "contrast_accuracy": trainer.accuracy(*contrast),
            "dev_accuracy": trainer.accuracy(*dev) if dev_accuracy is None else dev_accuracy,
        }

    before = evaluate()
    advance()
    points = []
    for size in p["sizes"]:
        chosen = set(subsets[size])
        train = texts([e for e in pool if e["set_id"] in chosen and e["role"] == "perturbed"])
        for rate in p["learning_rates"]:
            epochs = 0
            if size:
                epochs = trainer.fine_tune(
                    *train,
                    learning_rate=rate,
                    max_epochs=p["max_epochs"],
                    seed=p["seed"],
                    early_stopping=dev,
                    alive=lambda: jobs.heartbeat(analysis),
                )
            else:
                trainer.reset()  # size 0 is the base model unchanged
            points.append({"size": size, "learning_rate": rate, "epochs": epochs, **evaluate()})
            advance()
    best = inoculation.best_point(points)
    return {
        "before": {k: before[k] for k in ("original_accuracy", "contrast_accuracy")},
        "points": points,
        "best": {"size": best["size"], "learning_rate": best["learning_rate"]},
        **inoculation.outcome(before, best, p["delta"]),
        "pool_sets": len({e["set_id"] for e in pool}),
    }
