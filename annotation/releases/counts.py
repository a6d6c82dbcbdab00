"""What a release's card counts (its sets, perturbations, labels, tags, experts and time),
tallied from each chunk's columns (annotation.releases.members) whichever way the chunk was
read: numbers and dictionaries, no object per row."""

from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from annotation.releases.members import Members


def distinct(*columns: pa.Array) -> tuple[np.ndarray, list[tuple[Any, ...]]]:
    """Each row's combination of the columns' values as a number (0, 1, ...), and the
    combinations in that order: numbers and dictionaries, no object per row."""
    encoded = [pc.dictionary_encode(column) for column in columns]
    key = np.zeros(len(columns[0]), np.int64)
    for column in encoded:
        key = key * len(column.dictionary) + column.indices.to_numpy(zero_copy_only=False)
    values = [column.dictionary.to_pylist() for column in encoded]
    combined, at = np.unique(key, return_inverse=True)
    combos = []
    for number in combined.tolist():
        found = []
        for known in reversed(values):
            number, k = divmod(number, len(known))
            found.append(known[k])
        combos.append(tuple(reversed(found)))
    return at.reshape(-1), combos


def tally(*columns: pa.Array) -> Iterator[tuple[tuple[Any, ...], int]]:
    """How often each combination of the columns' values occurs: (values, times)."""
    at, combos = distinct(*columns)
    yield from zip(combos, np.bincount(at, minlength=len(combos)).tolist(), strict=True)


class Counts:
    """A release's counts, chunk by chunk (`add`), for its card (`summary`) and statistics
    (`seconds`: the perturbations' recorded seconds above 0, `total_seconds`)."""

    def __init__(self) -> None:
        self.sets: Counter[str] = Counter()
        self.perturbations: Counter[str] = Counter()
        self.labels: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.changed: Counter[str] = Counter()
        self.original_labels: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.tags: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.sets_of_one: Counter[str] = Counter()
        self.guidelines: Counter[int] = Counter()
        self.authors: set[str] = set()  # pseudonyms: one per expert
        self.seconds: Counter[int] = Counter()
        self.total_seconds = 0

    def add(self, m: Members) -> None:
        o, q = m.originals, m.perturbed
        for (split,), n in tally(o["split"]):
            self.sets[split] += n
        if len(alone := o["split"].filter(pa.array(m.sizes == 0))):
            for (split,), n in tally(alone):
                self.sets_of_one[split] += n
        labelled = m.truth == "label"
        if labelled:
            for (split, label), n in tally(o["split"], o["label"]):
                self.original_labels[split][label] += n
        # Free text: answers, not counted by value.
        truth = [q["label"]] if labelled else []
        for (split, changed, *label), n in tally(q["split"], q[f"{m.truth}_changed"], *truth):
            self.perturbations[split] += n
            self.changed[split] += n if changed else 0
            if labelled:
                self.labels[split][label[0]] += n
        tags = q["tags"]
        if len(tags.values):
            parents = pc.list_parent_indices(tags)
            for (split, tag), n in tally(q["split"].take(parents), pc.list_flatten(tags)):
                self.tags[split][tag] += n
        for (version,), n in tally(q["guideline_version"]):
            self.guidelines[version] += n
        self.authors.update(pc.unique(q["author"]).to_pylist())
        for (seconds,), n in tally(q["seconds_spent"]):
            self.total_seconds += seconds * n
            if seconds > 0:
                self.seconds[seconds] += n

    def summary(self) -> dict[str, Any]:
        return {
            "sets": dict(self.sets),
            "perturbations": dict(self.perturbations),
            "labels": {s: dict(v) for s, v in self.labels.items()},
            "label_changed": {s: self.changed.get(s, 0) for s in self.perturbations},
            "original_labels": {s: dict(v) for s, v in self.original_labels.items()},
            "tags": {s: dict(v) for s, v in self.tags.items()},
            "sets_of_one": dict(self.sets_of_one),
            "guideline_versions": {str(k): v for k, v in sorted(self.guidelines.items())},
            "experts": len(self.authors),
        }
