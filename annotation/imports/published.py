"""Gardner et al.'s (2020) published contrast sets in one step (docs/published/): the dataset's
own files, read as its evaluation script reads them (published_formats), into a project made
from a template that fits the dataset, and kept as published: every id, repeats inside a set
and edits of read-only fields (with warnings), answers of any shape. The counts of the paper's
Table 2 are reported beside the file's."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from annotation.errors import DomainError, ImportRejected
from annotation.imports import published_formats as formats
from annotation.imports import published_qa as qa
from annotation.imports.paired import ParsedSet
from annotation.imports.published_formats import TAG, Files, Read
from annotation.imports.readers import LineError, id_problem, resolve_label
from annotation.imports.sets import import_sets
from annotation.models import Project
from annotation.projects.services import project_create
from annotation.validation.answers import clean_answers


def _fields(*specs: str) -> list[dict[str, Any]]:
    """Fields from "name" (editable text), "name:ro" (read-only) or "name:kind"."""
    out = []
    for spec in specs:
        name, _, kind = spec.partition(":")
        out.append({"name": name, "kind": kind if kind not in ("", "ro") else "text",
                    "editable": kind != "ro"})  # fmt: skip
    return out


# Published edits need not flip the label (BoolQ, MC-TACO, NLVR2 keep it often), and some
# reorder whole passages (MATRES) or swap images (NLVR2): the authoring rules that would warn
# about every one are relaxed where the dataset does so by design.
KEEPS_LABELS = {"require_label_change": False}
LARGE_EDITS = {"require_label_change": False, "max_edit_ratio": 1.0}


@dataclass(frozen=True)
class Dataset:
    key: str
    name: str
    files: str  # the files, in order, as the dataset's repository names them
    paper_sets: int  # Gardner et al. (2020), Table 2
    paper_examples: int
    task_type: str
    fields: list[dict[str, Any]]
    labels: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    originals_counted: bool = False  # the paper's examples count the originals too (NLVR2)
    label_map: dict[str, str] = field(default_factory=dict)  # the files' names for labels

    def fits(self, project: Project) -> bool:
        """Whether a project has this dataset's task type and fields."""
        names = [f["name"] for f in self.fields]
        return project.task_type == self.task_type and project.field_names == names

    def template(self) -> dict[str, Any]:
        description = "a perturbation published by Gardner et al. (2020)"
        return {
            "name": f"{self.name} contrast sets",
            "task_type": self.task_type,
            "fields": self.fields,
            "labels": self.labels,
            "extra_labels": [],
            "settings": self.settings,
            "tags": [{"name": TAG, "description": description}],
            "guidelines": f"# {self.name} contrast sets\n\nImported as published by Gardner et "
            "al. (2020), *Evaluating Models' Local Decision Boundaries via Contrast Sets*; "
            "see docs/published/.\n",
        }


READERS: dict[str, Callable[[Files], Read]] = {
    "imdb": formats.imdb, "boolq": formats.boolq, "perspectrum": formats.perspectrum,
    "quoref": qa.quoref, "ropes": qa.ropes, "drop": qa.drop, "mctaco": formats.mctaco,
    "matres": formats.matres, "nlvr2": formats.nlvr2,
}  # fmt: skip
CLASSIFICATION, FREE_TEXT = Project.TaskType.CLASSIFICATION, Project.TaskType.FREE_TEXT
DATASETS = {
    d.key: d
    for d in [
        Dataset("imdb", "IMDb", "test_original.tsv, test_contrast.tsv (then dev_original.tsv, "
                "dev_contrast.tsv if wanted)", 488, 488, CLASSIFICATION, _fields("text"),
                ["negative", "positive"]),
        Dataset("boolq", "BoolQ", "boolq_perturbed.json", 70, 339, CLASSIFICATION,
                _fields("title:ro", "paragraph:ro", "question"), ["false", "true"], KEEPS_LABELS),
        Dataset("perspectrum", "PERSPECTRUM", "perspectrum_contrast_sets.csv", 217, 217,
                CLASSIFICATION, _fields("claim", "perspective:ro"), ["neg", "pos"]),
        Dataset("quoref", "Quoref", "quoref_original_subset_20191206_merged.json, "
                "quoref_test_perturbations_20191206_merged.json", 415, 700, FREE_TEXT,
                _fields("context:ro", "question"),
                settings={**KEEPS_LABELS, "answer_normalization": "drop"}),
        Dataset("ropes", "ROPES", "ropes_contrast_set_original_032820.json, "
                "ropes_contrast_set_032820.json", 974, 974, FREE_TEXT,
                _fields("background:ro", "situation", "question"),
                settings={**KEEPS_LABELS, "answer_normalization": "ropes",
                          "answer_consistency": "em"}),
        Dataset("drop", "DROP", "drop_contrast_sets_test.json (or DROP's test set, "
                "drop_dataset_test.json, then it: the originals' answers)", 623, 947, FREE_TEXT,
                _fields("passage:ro", "question"),
                settings={**KEEPS_LABELS, "answer_normalization": "drop",
                          "answer_consistency": "em"}),
        Dataset("mctaco", "MC-TACO", "original.tsv, changed.tsv", 646, 646, CLASSIFICATION,
                _fields("question", "answer"), ["no", "yes"],
                {**KEEPS_LABELS, "em_by_field": "question"}),
        Dataset("matres", "MATRES", "Platinum_subset_minimal_pairs.csv", 239, 401, CLASSIFICATION,
                _fields("text:html"), ["before", "after", "simultaneous", "vague"], LARGE_EDITS,
                label_map={"equal": "simultaneous"}),
        Dataset("nlvr2", "NLVR2", "contrast_set_nlvr2.jsonl", 479, 994, CLASSIFICATION,
                _fields("sentence", "left_url:image_url", "right_url:image_url"),
                ["false", "true"], LARGE_EDITS, originals_counted=True),
    ]
}  # fmt: skip


@dataclass
class PublishedImport:
    project: Project
    dataset: Dataset
    project_created: bool
    counts: dict[str, tuple[int, int]]  # split -> sets, perturbations, in the files
    created: int  # perturbations added (the rest were already here)
    already_present: int
    warnings: list[LineError]  # grouped; every one is on the batch
    warning_count: int
    batch: int
    notes: list[str]

    @property
    def test_counts(self) -> tuple[int, int]:
        """The test split's sets and examples, as the paper's Table 2 counts them."""
        sets, perturbations = self.counts.get("test", (0, 0))
        return sets, perturbations + (sets if self.dataset.originals_counted else 0)

    @property
    def matches_paper(self) -> bool:
        return self.test_counts == (self.dataset.paper_sets, self.dataset.paper_examples)

    def summary(self) -> str:
        d = self.dataset
        unit = "examples (originals included)" if d.originals_counted else "perturbations"
        order = sorted(self.counts.items(), key=lambda item: (item[0] != "test", item[0]))
        splits = "; ".join(f"{split}: {n} sets, {m} perturbations" for split, (n, m) in order)
        sets, examples = self.test_counts
        paper = f"The paper's Table 2: {d.paper_sets} sets, {d.paper_examples} {unit}"
        paper += (
            ": the same." if self.matches_paper else f"; here on test: {sets} sets, {examples}."
        )
        return (f"{d.name}: {splits}. {paper} {self.created} perturbations added, "
                f"{self.already_present} already here.")  # fmt: skip


def import_published(
    *,
    dataset: str,
    files: Files,
    user: Any,
    project: Project | None = None,
    slug: str = "",
    accept: bool = True,
) -> PublishedImport:
    """Import a published dataset's files (in its order) into `project`, or into a new project
    from the dataset's template under `slug`; all or nothing (ImportRejected, DomainError).
    Published sets are accepted unless `accept` is false (then they go to validation)."""
    spec = DATASETS.get(dataset)
    if spec is None:
        raise DomainError(f"unknown dataset {dataset!r}; choose one of {', '.join(DATASETS)}.")
    if project is not None:
        _check_fit(project, spec)
    sets, notes, problems = READERS[dataset](files)
    with transaction.atomic():
        created = project is None
        if project is None:
            slug = slug or dataset
            if Project.objects.filter(slug=slug).exists():
                raise DomainError(f"a project with the slug {slug!r} exists; import into it.")
            project = project_create(user=user, slug=slug, **spec.template())
        problems += _check_truths(project, spec, sets)
        if problems:
            raise ImportRejected(problems)
        result = import_sets(
            project=project, user=user, sets=sets, source_name=", ".join(n for n, _ in files),
            author=f"gardner-2020-{dataset}", accept=accept, published=True,
        )  # fmt: skip
    counts: dict[str, tuple[int, int]] = {}
    for s in sets:
        n, m = counts.get(s.original.split, (0, 0))
        counts[s.original.split] = (n + 1, m + len(s.perturbations))
    return PublishedImport(
        project, spec, created, counts, result.created, result.skipped, result.warnings,
        result.warning_count, result.batch, notes,
    )  # fmt: skip


def uploads_in_order(values: dict[str, Any]) -> Files:
    """The files of the page's or the API's form (file1 to file4), in the dataset's order."""
    uploads = [values.get(f"file{n}") for n in range(1, 5)]
    return [(u.name, u.read()) for u in uploads if u]


def _check_fit(project: Project, spec: Dataset) -> None:
    """A project made otherwise must have the dataset's task type and fields."""
    if not spec.fits(project):
        wanted = [f["name"] for f in spec.fields]
        raise DomainError(
            f"{spec.name} needs a {spec.task_type.replace('_', '-')} project with the fields "
            f"{', '.join(wanted)}; {project.name} is {project.task_type.replace('_', '-')} with "
            f"{', '.join(project.field_names)}. Import into a new project instead."
        )


def _check_truths(project: Project, spec: Dataset, sets: list[ParsedSet]) -> list[LineError]:
    """Ids present; labels resolved by the one rule of every import (resolve_label, with the
    dataset's own names); answers of any shape kept (import_sets warns about those the
    project's rules erase). Returns the problems, all of them."""
    errors: list[LineError] = []

    def truth(line: int | None, where: str, value: Any) -> Any:
        if project.is_free_text:
            answers = clean_answers(value)
            if isinstance(answers, str):
                errors.append(LineError(line, f"{where}: {answers}"))
            return answers
        label = resolve_label(value, project.labels, spec.label_map)
        if label is None:
            errors.append(LineError(line, f"{where}: unknown label {value!r}; the project's "
                                    f"labels are {', '.join(project.labels)}."))  # fmt: skip
        return label

    key = "answers" if project.is_free_text else "label"
    for s in sets:
        o = s.original
        where = f"set {o.external_id!r}: original"
        if problem := id_problem(o.external_id, "the original's id"):
            errors.append(LineError(s.line, f"{where}: {problem}"))
        if not (project.is_free_text and o.metadata.get("answer_waiting")):
            setattr(o, key, truth(s.line, where, getattr(o, key)))
        for p in s.perturbations:
            where = p.get("where") or "perturbation"
            if problem := id_problem(p["id"], "the perturbation's id"):
                errors.append(LineError(s.line, f"{where}: {problem}"))
            p[key] = truth(s.line, where, p[key])
    return errors
