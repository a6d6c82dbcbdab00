"""A published dataset's import in one step (docs/published/): its own files, read by the
dataset's reader (datasets.DATASETS), into a project made from the dataset's template or one
that fits it, and kept as published: every id, repeats inside a set and edits of read-only
fields (with warnings), answers of any shape. The counts of the paper's Table 2 are reported
beside the files'."""

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from annotation.errors import DomainError, ImportRejected, LineError
from annotation.imports.paired import ParsedSet
from annotation.imports.published.datasets import DATASETS, Dataset
from annotation.imports.published.reading import Files
from annotation.imports.readers import id_problem, resolve_label
from annotation.imports.services.sets import import_sets
from annotation.imports.set_checks import Counted, Warned
from annotation.models import Project
from annotation.projects.services import project_create
from annotation.text.answers import clean_answers


@dataclass
class PublishedImport:
    project: Project
    dataset: Dataset
    project_created: bool
    counts: dict[str, tuple[int, int]]  # split -> sets, perturbations, in the files
    created: int  # perturbations added (the rest were already here)
    already_present: int
    warnings: list[Counted]  # grouped; every one is on the batch
    warning_count: int
    batch: int
    notes: list[str]
    left_out: int = 0  # rows of the files left out, as the dataset's script leaves them

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
        left = f" {self.left_out} row(s) of the files left out." if self.left_out else ""
        warned = f" {self.warning_count} warning(s)." if self.warning_count else ""
        return (
            f"{d.name}: {splits}. {paper} {self.created} perturbations added, "
            f"{self.already_present} already here.{left}{warned}"
        )

    def as_dict(self) -> dict[str, Any]:
        """The import as the API answers it."""
        sets, examples = self.test_counts
        return {
            "project": self.project.slug,
            "project_created": self.project_created,
            "counts": {
                split: {"sets": n, "perturbations": m} for split, (n, m) in self.counts.items()
            },
            "test": {"sets": sets, "examples": examples},
            "paper": {"sets": self.dataset.paper_sets, "examples": self.dataset.paper_examples},
            "matches_paper": self.matches_paper,
            "perturbations": self.created,
            "already_present": self.already_present,
            "warnings": [w.as_dict() for w in self.warnings],
            "warning_count": self.warning_count,
            "batch": self.batch,
            "notes": self.notes,
            "left_out": self.left_out,
            "summary": self.summary(),
        }


def import_published(
    *,
    dataset: str,
    files: Files,
    user: Any,
    project: Project | None = None,
    slug: str = "",
    name: str = "",
    accept: bool = True,
) -> PublishedImport:
    """Import a published dataset's files (in its order) into `project`, or into a new project
    from the dataset's template under `slug` and `name` (default: the dataset's key and the
    template's name); all or nothing (ImportRejected, DomainError).
    Published sets are accepted unless `accept` is false (then they go to validation)."""
    spec = DATASETS.get(dataset)
    if spec is None:
        raise DomainError(f"unknown dataset {dataset!r}; choose one of {', '.join(DATASETS)}.")
    if project is not None:
        _check_fit(project, spec)
    sets, said, problems = spec.reader(files)
    # rows the dataset's script drops; a Warned is kept otherwise than written, with a warning
    left_out = [n for n in said if isinstance(n, LineError) and not isinstance(n, Warned)]
    notes = [n for n in said if isinstance(n, str)] + left_out_note(left_out)
    with transaction.atomic():
        created = project is None
        if project is None:
            slug = slug or dataset
            if Project.objects.filter(slug=slug).exists():
                raise DomainError(
                    f"a project with the slug {slug!r} exists: import into it from its own "
                    "Import page, or type another slug in the Slug box.",
                    field="slug",
                )
            template = spec.template()
            template["name"] = name or template["name"]
            project = project_create(user=user, slug=slug, **template)
        problems += _check_truths(project, spec, sets)
        if problems:
            raise ImportRejected(problems)
        result = import_sets(
            project=project,
            user=user,
            sets=sets,
            source_name=", ".join(n for n, _ in files),
            author=f"gardner-2020-{dataset}",
            accept=accept,
            published=True,
            left_out=left_out,
            kept_notes=[n for n in said if isinstance(n, Warned)],
        )
    counts: dict[str, tuple[int, int]] = {}
    for s in sets:
        n, m = counts.get(s.original.split, (0, 0))
        counts[s.original.split] = (n + 1, m + len(s.perturbations))
    return PublishedImport(
        project,
        spec,
        created,
        counts,
        result.created,
        result.skipped,
        result.warnings,
        result.warning_count,
        result.batch,
        notes,
        len(left_out),
    )


def left_out_note(left_out: list[LineError]) -> list[str]:
    """The rows left out, in one note per reason, with their lines (or records); the batch
    lists each under Skipped in Earlier imports."""
    reasons: dict[str, list[str]] = {}
    for row in left_out:
        where, _, reason = row.message.partition(": ")
        reasons.setdefault(reason, []).append(str(row.line) if row.line else where)
    notes = []
    for reason, places in reasons.items():
        at = ", ".join(places[:8]) + (f" and {len(places) - 8} more" if len(places) > 8 else "")
        notes.append(
            f"{len(places)} row(s) left out, {reason} (at {at}): see Skipped in Earlier imports."
        )
    return notes


# The page's and the API's form fields of a published dataset's files, in the dataset's order
# (import_now reads them in this order).
PUBLISHED_FILES = ("file1", "file2", "file3", "file4")


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
            errors.append(
                LineError(
                    line,
                    f"{where}: unknown label {value!r}; the project's "
                    f"labels are {', '.join(project.labels)}.",
                )
            )
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
