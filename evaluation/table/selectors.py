"""The results table (docs/workflows.md, "The results table"): a row per release (or per release
and tag) of the projects a user administers, a column group per model name, and in each cell
the figures of the newest successful run of that model on that release and split, each with its
95% interval and n, exactly as the run stored them (evaluation/metrics/).

Models are rows of one project each (ModelSpec): a lab registers the same model name in each of
its projects, and the table groups columns by that name."""

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet
from django.urls import reverse

from annotation.errors import DomainError
from annotation.models import Project, Release
from annotation.models.config import SPLITS
from annotation.releases.bundle import read_sets
from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runs.predictions import PredictionsFile

# A figure of run.metrics: its heading, and the key of run.metrics["counts"] that is its n
FIGURES = {
    "original_accuracy": ("Original accuracy", "originals"),
    "perturbed_accuracy": ("Perturbed accuracy", "perturbed"),
    "original_em": ("Original EM", "originals"),
    "original_f1": ("Original F1", "originals"),
    "perturbed_em": ("Perturbed EM", "perturbed"),
    "perturbed_f1": ("Perturbed F1", "perturbed"),
    "pair_accuracy": ("Pair accuracy", "pairs"),
    "consistency": ("Consistency", "sets"),
}
# A tag's figures (its perturbations' alone), by the key of run.metrics["per_tag"][tag]; the
# interval of run.metrics["intervals"]["per_tag"][tag] is that of accuracy, or of F1.
TAG_FIGURES = {
    "labels": {"perturbed_accuracy": "accuracy"},
    "answers": {"perturbed_em": "em", "perturbed_f1": "f1"},
    "pairs": {"pair_accuracy": "accuracy"},
}
TAG_INTERVAL = {"perturbed_accuracy", "perturbed_f1", "pair_accuracy"}
BY = ("release", "tag")
SLUG = re.compile(r"[-a-zA-Z0-9_]{1,64}")
SLUGS = r"^[-a-zA-Z0-9_]{1,64}(,[-a-zA-Z0-9_]{1,64})*$"  # `projects`, as the schema states it
RELEASES = ("latest", "all")
INTERVALS = ("1", "0")  # `intervals`: shown (1) or left out (0) of the page and downloads
IN_PROGRESS = (EvaluationRun.Status.QUEUED, EvaluationRun.Status.RUNNING)


@dataclass(frozen=True)
class Figure:
    value: float | None
    interval: list[float] | None
    n: int | None


@dataclass
class Cell:
    """One model on one row. `status`: scored (its newest successful run), running (none
    succeeded, one queued or running), failed (none succeeded, none on its way, one failed:
    `run` and `url` are the newest failed run's), missing (no run succeeded, failed or is on
    its way) or absent (the project has no model of that name)."""

    status: str
    run: int | None = None
    url: str = ""
    finished_at: Any = None
    figures: dict[str, Figure] = field(default_factory=dict)
    queueable: bool = False  # missing or failed, and its model can be queued (not predictions)
    spec: ModelSpec | None = None
    metrics: dict[str, Any] = field(default_factory=dict, repr=False)  # a scored run's


@dataclass
class Row:
    project: str
    project_name: str
    release: int
    version: str
    tag: str | None
    sets: int
    cells: dict[str, Cell]


@dataclass
class ResultsTable:
    split: str
    by: str
    releases: str
    projects: list[str]
    models: list[str]
    figures: list[str]
    rows: list[Row]
    left_out: list[dict[str, str]] = field(default_factory=list)  # chosen projects not shown
    intervals: bool = True

    @property
    def missing(self) -> list[tuple[Row, Cell]]:
        """The cells "score the missing cells" queues: one per release, its overall row."""
        return [
            (row, cell)
            for row in self.rows
            if row.tag is None
            for cell in row.cells.values()
            if cell.queueable
        ]


@dataclass(frozen=True)
class TableQuery:
    projects: list[Project]
    split: str = "test"
    by: str = "release"
    releases: str = "latest"
    intervals: bool = True


def table_query(user: Any, params: Any, administered: list[Project]) -> TableQuery:
    """The table a request asks for, checked: `projects` (slugs, comma-separated; all that
    `user` administers when absent), `split`, `by`, `releases` and `intervals` (1 or 0). A
    slug the user does not administer is refused (404) like one that does not exist; a
    malformed value is 400."""
    mine = {p.slug: p for p in administered}
    raw = params.get("projects")
    slugs = list(mine) if raw is None else [s.strip() for s in str(raw).split(",")]
    if not all(SLUG.fullmatch(s) for s in slugs):
        raise DomainError("projects is project slugs, comma-separated.", field="projects")
    unknown = [s for s in slugs if s not in mine]
    if unknown:  # as if it did not exist, whether it does or not
        names = ", ".join(repr(s) for s in unknown)
        raise DomainError(
            f"You administer no project named {names}.", code="not_found", field="projects"
        )
    split = params.get("split", "test")
    if split not in SPLITS:
        raise DomainError(f"split is one of {', '.join(SPLITS)}.", field="split")
    by = params.get("by", "release")
    if by not in BY:
        raise DomainError("by is release or tag.", field="by")
    releases = params.get("releases", "latest")
    if releases not in RELEASES:
        raise DomainError("releases is latest or all.", field="releases")
    intervals = str(params.get("intervals", "1"))
    if intervals not in INTERVALS:
        raise DomainError("intervals is 1 (shown) or 0 (left out).", field="intervals")
    chosen = [mine[s] for s in dict.fromkeys(slugs)]
    return TableQuery(chosen, split, by, releases, intervals == "1")


def kind_of(project: Project) -> str:
    if project.task_type == Project.TaskType.MINIMAL_PAIR:
        return "pairs"
    return "answers" if project.is_free_text else "labels"


def run_figures(metrics: dict[str, Any]) -> dict[str, Figure]:
    """The figures a run has, each with its interval and n, as the run stored them."""
    intervals, counts = metrics.get("intervals") or {}, metrics.get("counts") or {}
    return {
        key: Figure(metrics[key], intervals.get(key), counts.get(n_key))
        for key, (_, n_key) in FIGURES.items()
        if key in metrics
    }


def tag_figures(metrics: dict[str, Any], tag: str, kind: str) -> dict[str, Figure]:
    row = (metrics.get("per_tag") or {}).get(tag)
    if row is None:
        return {}
    interval = ((metrics.get("intervals") or {}).get("per_tag") or {}).get(tag)
    return {
        key: Figure(row.get(name), interval if key in TAG_INTERVAL else None, row.get("count"))
        for key, name in TAG_FIGURES[kind].items()
        if name in row
    }


def _releases(query: TableQuery) -> list[Release]:
    found = Release.objects.filter(project__in=query.projects).select_related("project")
    held = [r for r in found if query.split in r.counts.get("sets", {})]
    if query.releases == "latest":  # the newest release of each project (Release's ordering)
        held = list({r.project_id: r for r in reversed(held)}.values())
    order = {p.pk: i for i, p in enumerate(query.projects)}
    return sorted(held, key=lambda r: (order[r.project_id], r.created_at, r.pk))


def _runs(releases: list[Release], split: str) -> QuerySet[EvaluationRun]:
    return (
        EvaluationRun.objects.filter(release__in=releases, split=split)
        .select_related("model")
        .order_by("finished_at", "created_at", "pk")  # the newest last
    )


def _cell(slug: str, spec: ModelSpec | None, runs: list[EvaluationRun]) -> Cell:
    if spec is None:
        return Cell("absent")
    succeeded = [r for r in runs if r.status == EvaluationRun.Status.SUCCEEDED]
    if succeeded:
        run = succeeded[-1]
        url = reverse("run", args=[slug, run.pk])
        figures = run_figures(run.metrics)
        return Cell("scored", run.pk, url, run.finished_at, figures, spec=spec, metrics=run.metrics)
    going = [r for r in runs if r.status in IN_PROGRESS]
    if going:
        return Cell("running", going[-1].pk, reverse("run", args=[slug, going[-1].pk]), spec=spec)
    queueable = spec.kind != PredictionsFile.name
    failed = [r for r in runs if r.status == EvaluationRun.Status.FAILED]
    if failed:  # a typo in a model's source fails every run: say so, and link the newest
        url = reverse("run", args=[slug, failed[-1].pk])
        return Cell(
            "failed", failed[-1].pk, url, failed[-1].finished_at, queueable=queueable, spec=spec
        )
    return Cell("missing", queueable=queueable, spec=spec)


def _model_names(specs: Iterable[ModelSpec], runs: Iterable[EvaluationRun]) -> list[str]:
    """Every registered model's name, and the predictions files that scored these releases."""
    named = {s.name for s in specs if s.kind != PredictionsFile.name}
    return sorted(named | {r.model.name for r in runs})


def tag_sets(release: Release, split: str) -> dict[str, int]:
    """How many of the split's contrast sets hold a perturbation of each tag."""
    counted: dict[str, int] = {}
    for record in read_sets(release):
        if record.split == split:
            for tag in {t for p in record.perturbations for t in p.get("tags", [])}:
                counted[tag] = counted.get(tag, 0) + 1
    return counted


def _tag_rows(row: Row, kind: str, sets: dict[str, int]) -> list[Row]:
    """The release's row again per tag of its perturbations, each cell the same run's; `sets`:
    each tag's number of sets."""
    tags = sorted({tag for cell in row.cells.values() for tag in cell.metrics.get("per_tag", {})})
    out = []
    for tag in tags:
        cells = {
            name: Cell(
                cell.status,
                cell.run,
                cell.url,
                cell.finished_at,
                tag_figures(cell.metrics, tag, kind),
            )
            for name, cell in row.cells.items()
        }
        count = sets.get(tag, 0)
        out.append(Row(row.project, row.project_name, row.release, row.version, tag, count, cells))
    return out


def results_table(query: TableQuery) -> ResultsTable:
    releases = _releases(query)
    runs = list(_runs(releases, query.split))
    found = ModelSpec.objects.filter(project__in=query.projects)
    specs = {(s.project_id, s.name): s for s in found}
    models = _model_names(specs.values(), runs)
    by_cell: dict[tuple[int, str], list[EvaluationRun]] = {}
    for run in runs:
        by_cell.setdefault((run.release_id, run.model.name), []).append(run)
    rows = []
    for release in releases:
        slug, project = release.project.slug, release.project
        cells = {
            name: _cell(slug, specs.get((project.pk, name)), by_cell.get((release.pk, name), []))
            for name in models
        }
        sets = release.counts["sets"][query.split]
        row = Row(slug, project.name, release.pk, release.version, None, sets, cells)
        rows.append(row)
        if query.by == "tag":
            rows += _tag_rows(row, kind_of(project), tag_sets(release, query.split))
    shown = {key for row in rows for cell in row.cells.values() for key in cell.figures}
    return ResultsTable(
        split=query.split,
        by=query.by,
        releases=query.releases,
        projects=[p.slug for p in query.projects],
        models=models,
        figures=[key for key in FIGURES if key in shown],
        rows=rows,
        left_out=left_out(query, releases),
        intervals=query.intervals,
    )


def left_out(query: TableQuery, releases: list[Release]) -> list[dict[str, str]]:
    """The chosen projects the table has no row of, and why."""
    shown = {r.project_id for r in releases}
    missing = [p for p in query.projects if p.pk not in shown]
    released = set(Release.objects.filter(project__in=missing).values_list("project_id", flat=True))
    return [
        {
            "project": p.slug,
            "project_name": p.name,
            "reason": (
                f"no release has a {query.split} split" if p.pk in released else "no release yet"
            ),
        }
        for p in missing
    ]
