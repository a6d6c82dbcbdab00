"""How large Gardner et al.'s (2020) published edits are, per dataset (issue 47): the share of
the editable fields' tokens each perturbation changes, measured as the authoring rules measure
it (annotation.text.edits.fields_edit_distance over the template's editable fields; a
read-only passage or image is not counted). It prints, per dataset, the count, the median, the
90th percentile, the largest, how many exceed the old default (0.5), and the template's
max_edit_ratio, which must be at least the largest for a new project of that kind to accept
what its experts wrote. Reads the files in ../shared/data; writes nothing.

    .venv/bin/python benchmarks/edit_sizes.py
"""

import os
import statistics
import sys
from pathlib import Path

import django
from common import ROOT, require_data

sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
django.setup()

from annotation.imports.published.datasets import DATASETS  # noqa: E402
from annotation.text.edits import fields_edit_distance  # noqa: E402

GARDNER = "gardner-contrast-sets"
FILES = {
    "imdb": ("imdb-contrast", ["test_original.tsv", "test_contrast.tsv"]),
    "boolq": (GARDNER, ["boolq_perturbed.json"]),
    "perspectrum": (GARDNER, ["perspectrum_contrast_sets.csv"]),
    "quoref": (GARDNER, ["quoref_original_subset_20191206_merged.json",
                         "quoref_test_perturbations_20191206_merged.json"]),
    "ropes": (GARDNER, ["ropes_contrast_set_original_032820.json",
                        "ropes_contrast_set_032820.json"]),
    "drop": (GARDNER, ["drop_contrast_sets_test.json"]),
    "mctaco": (GARDNER, ["mctaco/original.tsv", "mctaco/changed.tsv"]),
    "matres": (GARDNER, ["Platinum_subset_minimal_pairs.csv"]),
    "nlvr2": (GARDNER, ["contrast_set_nlvr2.jsonl"]),
}  # fmt: skip
OLD_DEFAULT = 0.5


def edit_sizes(key: str) -> list[float]:
    """Each published perturbation's share of changed tokens over the editable fields."""
    folder, names = FILES[key]
    files = [(Path(n).name, require_data(folder, n).read_bytes()) for n in names]
    dataset = DATASETS[key]
    sets, _, errors = dataset.reader(files)
    assert not errors, errors[:3]
    editable = [f["name"] for f in dataset.fields if f["editable"]]
    return [
        fields_edit_distance(s.original.fields, p["fields"], editable)
        for s in sets
        for p in s.perturbations
    ]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    print(f"{'dataset':12} {'edits':>6} {'median':>7} {'p90':>6} {'max':>6} "
          f"{'>0.5':>6} {'limit':>6}  editable fields")  # fmt: skip
    for key, dataset in DATASETS.items():
        sizes = edit_sizes(key)
        limit = dataset.template()["settings"]["max_edit_ratio"]
        over = sum(size > OLD_DEFAULT for size in sizes)
        editable = ", ".join(f["name"] for f in dataset.fields if f["editable"])
        print(f"{key:12} {len(sizes):6} {statistics.median(sizes):7.3f} "
              f"{percentile(sizes, 0.9):6.3f} {max(sizes):6.3f} {over:6} {limit:6.2f}  "
              f"{editable}")  # fmt: skip
        # Against the baseline, the old default: how many edits each limit refuses.
        refused = sum(size > limit for size in sizes)
        print(
            f"{'':12} refused: {refused} now, {over} under the old 0.5 "
            f"(limit / largest edit: {limit / max(sizes):.2f})"
        )


if __name__ == "__main__":
    main()
