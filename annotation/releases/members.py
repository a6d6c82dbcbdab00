"""A chunk of released contrast sets, typed: the one thing a release's sources give its
writer (annotation.releases.bundle). The rows' source (annotation.releases.records) builds it
from the sets' records, which it keeps for the lines no column derives; the SQL source
(annotation.releases.copied) from COPY's columns. Its columns are Arrow arrays, one row per
original and one per perturbation, with the order that puts each set's original before its
perturbations."""

from typing import Any

import numpy as np
import pyarrow as pa

from annotation.text.answers import answer_text

SETS_AT_ONCE = 2000  # sets a chunk: its files written, then the next
TEXT = pa.string()
VOTES = pa.list_(pa.struct([("response", TEXT), ("count", pa.int64())]))
EXTRA = [  # a released perturbation's columns beyond those of an example
    ("rationale", TEXT),
    ("author", TEXT),
    ("votes", VOTES),
    ("agreement", pa.float64()),
    ("edit_distance", pa.float64()),
    ("seconds_spent", pa.int64()),
    ("guideline_version", pa.int64()),
]
# Keys of the bundle's dicts beside the fields: a field of one of these names is written dict
# by dict, as its value takes the key's place.
COLUMNS = {
    "id",
    "set_id",
    "role",
    "split",
    "label",
    "label_changed",
    "tags",
    "votes",
    "query",
    "choices",
    "gold",
    "answers",
    "answers_changed",
}


class Members:
    """The columns of a chunk of sets: `originals` (one row a set, with its `set_id` and
    `split`) and `perturbed` (one row a perturbation, in set order, with every released key
    but its fields' and truth's as a column), each set's number of perturbations (`sizes`; 0
    for an original released alone) and, from rows, the sets' `records`."""

    records: list[dict[str, Any]] | None

    def __init__(self, records: list[dict[str, Any]], field_names: list[str], free_text: bool):
        self.records = records
        self.truth = "answers" if free_text else "label"
        perturbations = [p for r in records for p in r["perturbations"]]
        self.sizes = np.fromiter((len(r["perturbations"]) for r in records), np.int64, len(records))
        originals = [r["original"] for r in records]
        self.field_order = _field_order([*originals, *perturbations], field_names)
        self.originals = self._columns(originals, field_names)
        self.originals["set_id"] = pa.array([r["set_id"] for r in records], TEXT)
        self.originals["split"] = pa.array([r["split"] for r in records], TEXT)
        self.owners = np.repeat(np.arange(len(records)), self.sizes)
        self.perturbed = self._columns(perturbations, field_names)
        for name in ("set_id", "split"):
            self.perturbed[name] = self.originals[name].take(self.owners)
        self.perturbed[f"{self.truth}_changed"] = pa.array(
            [p[f"{self.truth}_changed"] for p in perturbations], pa.bool_()
        )
        self.perturbed["tags"] = pa.array([p["tags"] for p in perturbations], pa.list_(TEXT))
        self.perturbed["votes"] = votes_array([p["votes"] for p in perturbations])
        for name, kind in EXTRA:
            if name != "votes":
                self.perturbed[name] = pa.array([p[name] for p in perturbations], kind)
        self.splits = list(dict.fromkeys(r["split"] for r in records))
        self.order = _member_order(self.sizes)

    @classmethod
    def of_columns(
        cls, originals: dict[str, Any], perturbed: dict[str, Any], sizes: np.ndarray, order: Any
    ) -> "Members":
        """Members whose columns are already built (annotation.releases.copied): plain, with
        the fields in `order`, each set's `set_id` and `split` among the originals' columns."""
        m = cls.__new__(cls)
        m.records, m.truth, m.field_order = None, "label", tuple(order)
        m.originals, m.perturbed, m.sizes = originals, perturbed, sizes
        m.owners = np.repeat(np.arange(len(sizes)), sizes)
        for name in ("set_id", "split"):
            perturbed[name] = originals[name].take(m.owners)
        m.splits = originals["split"].unique().to_pylist()
        m.order = _member_order(sizes)
        return m

    @property
    def plain(self) -> bool:
        """Whether the JSON lines can be derived from the columns: labels, not answers (which
        keep their spans as lists), and every member's fields the project's, in one order."""
        return self.truth == "label" and self.field_order is not None

    def _columns(self, members: list[dict[str, Any]], field_names: list[str]) -> dict[str, Any]:
        columns: dict[str, Any] = {"id": pa.array([m["id"] for m in members], TEXT)}
        for name in field_names:
            columns[name] = pa.array([m["fields"].get(name) for m in members], TEXT)
        if self.truth == "answers":
            texts = [[answer_text(a) for a in m["answers"]] for m in members]
            columns["answers"] = pa.array(texts, pa.list_(TEXT))
        else:
            columns["label"] = pa.array([m["label"] for m in members], TEXT)
        return columns

    def in_order(self, originals: Any, perturbed: Any) -> Any:
        """Per-member arrays, originals' and perturbations', as one array in member order:
        each set's original, then its perturbations."""
        return pa.concat_arrays([originals, perturbed]).take(self.order)


def _field_order(members: list[dict[str, Any]], names: list[str]) -> tuple[str, ...] | None:
    """The order of every member's fields where it is one, and they are the project's fields
    (none named as a key of the bundle's dicts); else None: written dict by dict."""
    keys = {tuple(m["fields"]) for m in members}
    if len(keys) != 1 or COLUMNS & set(names):
        return None
    order = next(iter(keys))
    return order if set(order) == set(names) else None


def _member_order(sizes: np.ndarray) -> np.ndarray:
    """Where row k of [originals, perturbations] goes for each set's original to come before
    its perturbations."""
    n_sets, n_perturbed = len(sizes), int(sizes.sum())
    starts = np.zeros(n_sets, np.int64)
    np.cumsum(sizes[:-1] + 1, out=starts[1:])
    order = np.empty(n_sets + n_perturbed, np.int64)
    order[starts] = np.arange(n_sets)
    mask = np.ones(len(order), bool)
    mask[starts] = False
    order[mask] = n_sets + np.arange(n_perturbed)
    return order


def votes_array(counted: list[dict[str, int]]) -> pa.Array:
    """Each perturbation's votes as a list of (response, count), in the order counted."""
    offsets = np.zeros(len(counted) + 1, np.int32)
    np.cumsum([len(v) for v in counted], out=offsets[1:])
    responses = pa.array([r for v in counted for r in v], TEXT)
    counts = pa.array([n for v in counted for n in v.values()], pa.int64())
    pairs = pa.StructArray.from_arrays([responses, counts], names=["response", "count"])
    return pa.ListArray.from_arrays(pa.array(offsets), pairs, type=VOTES)
