"""A label project's release read without a Python object per row (docs/performance.md): its
perturbations are chosen and stored as release entries by SQL (annotation.releases.sql), and
each chunk of sets comes from `COPY (SELECT ...) TO STDOUT` in CSV straight into Arrow columns
(pyarrow.csv): the typed chunk (annotation.releases.members) that the bundle writes and counts
as it does the rows' source's. The agreement figures are tallied from the same columns, a
chunk at a time, so that memory holds a chunk whatever the release's size.

Used where every file derives from columns: PostgreSQL, classification with labels and plain
lm_eval docs, no field named as one of the bundle's keys. A chunk whose members' fields are
not the project's texts raises NotPlain, and the release is written from rows instead
(services.release_create). The files are those of the rows' path, byte for byte
(tests/annotation/releases/test_copied.py).
"""

import io
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from django.db import connection
from pyarrow import csv

from annotation.models import Project
from annotation.releases import sql
from annotation.releases.counts import distinct
from annotation.releases.exports import plain_docs
from annotation.releases.members import COLUMNS, EXTRA, TEXT, Members, votes_array
from annotation.releases.statistics import SplitAgreement

LAST = 2**63 - 1  # above every pivot: the last chunk's end
READ = csv.ParseOptions(newlines_in_values=True)


class NotPlain(Exception):
    """A member's fields are not the project's texts: the release is written from rows."""


class Gone(Exception):
    """A chosen perturbation was deleted while the release was read (services.PUBLISH_RACE)."""


def applies(project: Project) -> bool:
    names = set(project.field_names)
    bundle_keys = COLUMNS | {name for name, _ in EXTRA}
    plain = bool(names) and not names & bundle_keys
    return connection.vendor == "postgresql" and plain_docs(project) and plain


def field_order(names: list[str]) -> tuple[str, ...]:
    """The order of a jsonb object's keys, as the driver's rows decode them: shorter first,
    then by their bytes."""
    return tuple(sorted(names, key=lambda name: (len(name.encode()), name.encode())))


def read(cursor: Any, query: str, params: dict[str, Any], types: dict[str, Any]) -> pa.Table:
    """The rows of `query` as an Arrow table: COPY's CSV, read by Arrow. In PostgreSQL's CSV
    a NULL is an empty field and an empty string is quoted: so are they read."""
    out = io.BytesIO()
    text = cursor.mogrify(query, params).decode()
    cursor.copy_expert(f"COPY ({text}) TO STDOUT (FORMAT csv, HEADER)", out)
    options = csv.ConvertOptions(
        column_types=types,
        null_values=[""],
        strings_can_be_null=True,
        quoted_strings_can_be_null=False,
        true_values=["t"],
        false_values=["f"],
    )
    table = csv.read_csv(
        pa.BufferReader(out.getvalue()), parse_options=READ, convert_options=options
    )
    return table.combine_chunks()


def _array(table: pa.Table, name: str) -> pa.Array:
    column = table.column(name)
    return column.chunk(0) if column.num_chunks == 1 else pa.concat_arrays(column.chunks)


class Columns:
    """A release's chunks of sets, read by COPY into Members, with what the card counts
    and the agreement figures tallied from them."""

    def __init__(self, project: Project, cursor: Any, authors: dict[int, str]):
        self.project, self.cursor = project, cursor
        self.names, self.labels = project.field_names, project.all_labels
        self.fields = [f"f{j}" for j in range(len(self.names))]
        self.authors = (pa.array(list(authors), pa.int64()), pa.array(list(authors.values()), TEXT))
        self.tag_names = sql.tag_names(cursor)
        widths = sql.widths(cursor, self.labels, project.labels)
        self.agreement = {s: SplitAgreement(project, w) for s, w in widths.items()}
        self.splits: set[str] = set()
        text = dict.fromkeys(self.fields, TEXT)
        self.types = {
            "originals": {"id": pa.int64(), "size": pa.int64(), "external_id": TEXT},
            "perturbations": {"pivot_id": pa.int64(), "id": TEXT, "label": TEXT},
        }
        self.types["originals"] |= {"label": TEXT, "split": TEXT, **text, "plain": pa.bool_()}
        self.types["perturbations"] |= {
            **text,
            **dict.fromkeys(["rationale", "tags", "votes"], TEXT),
            "edit_distance": pa.float64(),
            **dict.fromkeys(["seconds_spent", "guideline_version", "author_id"], pa.int64()),
            "plain": pa.bool_(),
        }

    def chunks(self, sets: int, release_id: int) -> Iterator[Members]:
        """The release's sets, `sets` at a time, each chunk's release entries stored as it is
        read (while the files' threads write the chunk before)."""
        starts = sql.chunk_starts(self.cursor, sets)
        for k, low in enumerate(starts):
            high = starts[k + 1] if k + 1 < len(starts) else LAST
            params = sql.copy_params(self.names, low, high)
            o = read(self.cursor, sql.originals(self.names), params, self.types["originals"])
            query = sql.perturbations(self.names, self.labels)
            p = read(self.cursor, query, params, self.types["perturbations"])
            if not (pc.all(o["plain"]).as_py() and pc.all(p["plain"]).as_py()):
                raise NotPlain
            members = self._members(o, p)
            sql.store_entries(self.cursor, release_id, low, high)
            yield members

    def _members(self, o: pa.Table, p: pa.Table) -> Members:
        sizes = _array(o, "size").to_numpy()
        expected = np.repeat(_array(o, "id").to_numpy(), sizes)
        if not np.array_equal(expected, _array(p, "pivot_id").to_numpy()):
            raise Gone  # a perturbation chosen, deleted since
        ids = _array(o, "external_id")
        fields = {name: _array(o, f) for name, f in zip(self.names, self.fields, strict=True)}
        originals = {"id": ids, **fields, "label": _array(o, "label"), "set_id": ids}
        originals["split"] = _array(o, "split")
        label = _array(p, "label")
        owners = pa.array(np.repeat(np.arange(len(sizes)), sizes))
        perturbed: dict[str, Any] = {
            "id": _array(p, "id"),
            **{name: _array(p, f) for name, f in zip(self.names, self.fields, strict=True)},
            "label": label,
            "label_changed": pc.not_equal(label, originals["label"].take(owners)),
            "tags": self._tags(_array(p, "tags")),
            "rationale": _array(p, "rationale"),
            "author": self.authors[1].take(
                pc.index_in(_array(p, "author_id"), value_set=self.authors[0])
            ),
            "edit_distance": _rounded(_array(p, "edit_distance")),
            "seconds_spent": _array(p, "seconds_spent"),
            "guideline_version": _array(p, "guideline_version"),
        }
        perturbed["votes"], perturbed["agreement"], table = self._votes(_array(p, "votes"), label)
        members = Members.of_columns(originals, perturbed, sizes, field_order(self.names))
        self._agree(table, label, members.perturbed["split"])
        return members

    def _tags(self, keys: pa.Array) -> pa.Array:
        """Each perturbation's tag names, sorted, from its tags' ids ("3,7"; null: none)."""
        encoded = pc.dictionary_encode(keys)
        names = [
            sorted(self.tag_names[pk] for pk in key.split(","))
            for key in encoded.dictionary.to_pylist()
        ]
        listed = pa.array([*names, []], pa.list_(TEXT))
        return listed.take(pc.fill_null(encoded.indices, len(names)))

    def _votes(self, keys: pa.Array, label: pa.Array) -> tuple[pa.Array, pa.Array, np.ndarray]:
        """Each perturbation's votes ({label: count} where counted, in the project's label
        order) and its agreement, as services.choose and the bundle's rows make them, each
        distinct pair of counts and label computed once; and the table of counted votes."""
        counted_votes, agreement, table = [], [], []
        at, combos = distinct(keys, label)
        for key, released in combos:
            counts = [int(n) for n in key.split(",")]
            counted = {name: n for name, n in zip(self.labels, counts, strict=True) if n}
            total = sum(counted.values())
            agreeing = counted.get(released or sql.AGREE, 0)
            counted_votes.append(counted)
            agreement.append(round(agreeing / total, 4) if total else None)
            table.append(counts)
        taken = pa.array(at)
        rows = np.array(table, np.int64).reshape(len(table), len(self.labels))[at]
        votes = votes_array(counted_votes).take(taken)
        return votes, pa.array(agreement, pa.float64()).take(taken), rows

    def _agree(self, table: np.ndarray, label: pa.Array, split: pa.Array) -> None:
        """The chunk's vote table into each split's agreement (rows with votes only)."""
        gold = pc.fill_null(
            pc.index_in(label, value_set=pa.array(self.labels, TEXT)), -1
        ).to_numpy()
        voted = table.sum(axis=1) > 0
        splits = split.to_numpy(zero_copy_only=False)
        self.splits.update(splits.tolist())
        for name in set(splits.tolist()):
            mine = voted & (splits == name)
            if name not in self.agreement:
                self.agreement[name] = SplitAgreement(self.project, 0)
            self.agreement[name].add(table[mine], gold[mine])

    def per_split(self) -> dict[str, Any]:
        """Agreement per split, as release_statistics gives it, once every chunk is read."""
        return {s: self.agreement[s].block(self.project.labels) for s in sorted(self.splits)}


def _rounded(values: pa.Array) -> pa.Array:
    """round(value, 4), as the rows' path rounds each, once per distinct value."""
    distinct, at = np.unique(values.to_numpy(), return_inverse=True)
    return pa.array([round(v, 4) for v in distinct.tolist()], pa.float64()).take(pa.array(at))
