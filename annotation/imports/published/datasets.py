"""The published contrast sets (Gardner et al., 2020), in one table: each dataset with its
reader, the template of the project made for it, the paper's counts and its page in
docs/published/."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from annotation.imports.published import delimited, json_records, squad
from annotation.imports.published.drop import drop
from annotation.imports.published.reading import TAG, Files, Read
from annotation.models import Project


def _fields(*specs: str) -> list[dict[str, Any]]:
    """Fields from "name" (editable text), "name:ro" (read-only) or "name:kind"."""
    out = []
    for spec in specs:
        name, _, kind = spec.partition(":")
        out.append(
            {
                "name": name,
                "kind": kind if kind not in ("", "ro") else "text",
                "editable": kind != "ro",
            }
        )
    return out


# Published edits need not flip the label (BoolQ, MC-TACO, NLVR2 keep it often), and some
# reorder whole passages (MATRES) or swap images (NLVR2): the authoring rules that would warn
# about every one are relaxed where the dataset does so by design.
KEEPS_LABELS = {"require_label_change": False}
LARGE_EDITS = {"require_label_change": False, "max_edit_ratio": 1.0}
# Each template's edit-size limit (max_edit_ratio, the share of the editable fields' tokens an
# edit may change; read-only fields such as Quoref's passage are not counted) is the largest
# published edit of its dataset, rounded up to a tenth, so that a new project of that kind
# accepts what Gardner et al.'s experts wrote: benchmarks/edit_sizes.py measures them, and
# docs/published/README.md lists the figures. Short questions are often rewritten whole
# (BoolQ, Quoref, DROP: up to 96-100%), so there the limit is off (1.0).
EDIT_LIMITS = {
    "imdb": 0.6,
    "boolq": 1.0,
    "perspectrum": 0.9,
    "quoref": 1.0,
    "ropes": 0.9,
    "drop": 1.0,
    "mctaco": 0.7,
    "matres": 1.0,
    "nlvr2": 1.0,
}


# The most files each dataset takes (its readers' `expect`); the others take one. The published
# import page shows that many file inputs for the chosen dataset (all four without a script).
MOST_FILES = {"imdb": 4, "quoref": 2, "ropes": 2, "drop": 2, "mctaco": 2}


@dataclass(frozen=True)
class Dataset:
    key: str
    name: str
    reader: Callable[[Files], Read]  # the files, in order, to sets as the dataset pairs them
    files: str  # the files, in order, as the dataset's repository names them
    docs: str  # its page: the files, the pairing, the template, the ids
    paper_sets: int  # Gardner et al. (2020), Table 2
    paper_examples: int
    # The template of the project made for it:
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
        """project_create's arguments for a project made for this dataset."""
        description = "a perturbation published by Gardner et al. (2020)"
        return {
            "name": f"{self.name} contrast sets",
            "task_type": self.task_type,
            "fields": self.fields,
            "labels": self.labels,
            "extra_labels": [],
            "settings": {"max_edit_ratio": EDIT_LIMITS[self.key], **self.settings},
            "tags": [{"name": TAG, "description": description}],
            # Read by validators and study participants: no path of this repository (its
            # docs page is for the admin, who finds it on the import page).
            "guidelines": f"# {self.name} contrast sets\n\nImported as published by Gardner et "
            "al. (2020), *Evaluating Models' Local Decision Boundaries via Contrast Sets*.\n",
        }


CLASSIFICATION, FREE_TEXT = Project.TaskType.CLASSIFICATION, Project.TaskType.FREE_TEXT
DATASETS = {
    d.key: d
    for d in [
        Dataset(
            "imdb",
            "IMDb",
            delimited.imdb,
            files="test_original.tsv, test_contrast.tsv (then dev_original.tsv, "
            "dev_contrast.tsv if wanted)",
            docs="docs/published/imdb.md",
            paper_sets=488,
            paper_examples=488,
            task_type=CLASSIFICATION,
            fields=_fields("text"),
            labels=["negative", "positive"],
        ),
        Dataset(
            "boolq",
            "BoolQ",
            json_records.boolq,
            files="boolq_perturbed.json",
            docs="docs/published/boolq.md",
            paper_sets=70,
            paper_examples=339,
            task_type=CLASSIFICATION,
            fields=_fields("title:ro", "paragraph:ro", "question"),
            labels=["false", "true"],
            settings=KEEPS_LABELS,
        ),
        Dataset(
            "perspectrum",
            "PERSPECTRUM",
            delimited.perspectrum,
            files="perspectrum_contrast_sets.csv",
            docs="docs/published/perspectrum.md",
            paper_sets=217,
            paper_examples=217,
            task_type=CLASSIFICATION,
            fields=_fields("claim", "perspective:ro"),
            labels=["neg", "pos"],
        ),
        Dataset(
            "quoref",
            "Quoref",
            squad.quoref,
            files="quoref_original_subset_20191206_merged.json, "
            "quoref_test_perturbations_20191206_merged.json",
            docs="docs/published/quoref.md",
            paper_sets=415,
            paper_examples=700,
            task_type=FREE_TEXT,
            fields=_fields("context:ro", "question"),
            settings={**KEEPS_LABELS, "answer_normalization": "drop"},
        ),
        Dataset(
            "ropes",
            "ROPES",
            squad.ropes,
            files="ropes_contrast_set_original_032820.json, ropes_contrast_set_032820.json",
            docs="docs/published/ropes.md",
            paper_sets=974,
            paper_examples=974,
            task_type=FREE_TEXT,
            fields=_fields("background:ro", "situation", "question"),
            settings={**KEEPS_LABELS, "answer_normalization": "ropes", "answer_consistency": "em"},
        ),
        Dataset(
            "drop",
            "DROP",
            drop,
            files="drop_contrast_sets_test.json (or DROP's test set, drop_dataset_test.json, "
            "then it: the originals' answers)",
            docs="docs/published/drop.md",
            paper_sets=623,
            paper_examples=947,
            task_type=FREE_TEXT,
            fields=_fields("passage:ro", "question"),
            settings={**KEEPS_LABELS, "answer_normalization": "drop", "answer_consistency": "em"},
        ),
        Dataset(
            "mctaco",
            "MC-TACO",
            delimited.mctaco,
            files="original.tsv, changed.tsv",
            docs="docs/published/mctaco.md",
            paper_sets=646,
            paper_examples=646,
            task_type=CLASSIFICATION,
            fields=_fields("question", "answer"),
            labels=["no", "yes"],
            settings={**KEEPS_LABELS, "em_by_field": "question"},
        ),
        Dataset(
            "matres",
            "MATRES",
            delimited.matres,
            files="Platinum_subset_minimal_pairs.csv",
            docs="docs/published/matres.md",
            paper_sets=239,
            paper_examples=401,
            task_type=CLASSIFICATION,
            fields=_fields("text:html"),
            labels=["before", "after", "simultaneous", "vague"],
            settings=LARGE_EDITS,
            label_map={"equal": "simultaneous"},
        ),
        Dataset(
            "nlvr2",
            "NLVR2",
            json_records.nlvr2,
            files="contrast_set_nlvr2.jsonl",
            docs="docs/published/nlvr2.md",
            paper_sets=479,
            paper_examples=994,
            task_type=CLASSIFICATION,
            fields=_fields("sentence", "left_url:image_url", "right_url:image_url"),
            labels=["false", "true"],
            settings=LARGE_EDITS,
            originals_counted=True,
        ),
    ]
}
