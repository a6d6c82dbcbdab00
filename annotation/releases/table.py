"""A release as one table and its views (docs/performance.md): each chunk of contrast sets
becomes a columnar table (Arrow) of their members, one row per original and one per
perturbation, from which the typed files are derived by Arrow's own kernels and writers, in C:

- `data/examples/{split}.parquet`: the members, originals first in each set;
- `data/sets/{split}.parquet`: the originals, each with its perturbations as a list (the
  perturbations' rows under the sets' offsets, not copied);
- `paired/{split}_{original,contrast}.tsv` (single-text classification): the originals'
  cells repeated once per perturbation beside the perturbations' own, escaped and quoted as
  annotation.text.cells writes a row.

A thread of its own writes them (Arrow lets go of the GIL) while the caller builds the next
chunk's JSON lines, one chunk at a time, so that memory holds at most two chunks.
"""

from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from annotation.models import Project
from annotation.releases.files import HashingFile, file_sha256
from annotation.text.cells import spreadsheet_cell, tsv_line
from annotation.validation.answers import answer_text

TEXT = pa.string()
VOTES = pa.list_(pa.struct([("response", TEXT), ("count", pa.int64())]))
EXTRA = [  # a released perturbation's columns beyond those of an example
    ("rationale", TEXT), ("author", TEXT), ("votes", VOTES), ("agreement", pa.float64()),
    ("edit_distance", pa.float64()), ("seconds_spent", pa.int64()),
    ("guideline_version", pa.int64()),
]  # fmt: skip


class Members:
    """The columns of one split's sets in a chunk: `originals` (one row a set) and `perturbed`
    (one row a perturbation, in set order), with each set's number of perturbations."""

    def __init__(self, records: list[dict[str, Any]], field_names: list[str], free_text: bool):
        self.truth = "answers" if free_text else "label"
        perturbations = [p for r in records for p in r["perturbations"]]
        self.sizes = np.fromiter((len(r["perturbations"]) for r in records), np.int64, len(records))
        originals = [r["original"] for r in records]
        self.originals = self._columns(originals, field_names)
        self.originals["set_id"] = pa.array([r["set_id"] for r in records], TEXT)
        self.perturbed = self._columns(perturbations, field_names)
        owners = np.repeat(np.arange(len(records)), self.sizes)
        self.perturbed["set_id"] = self.originals["set_id"].take(owners)
        self.perturbed[f"{self.truth}_changed"] = pa.array(
            [p[f"{self.truth}_changed"] for p in perturbations], pa.bool_()
        )
        self.perturbed["tags"] = pa.array([p["tags"] for p in perturbations], pa.list_(TEXT))
        self.perturbed["votes"] = _votes([p["votes"] for p in perturbations])
        for name, kind in EXTRA:
            if name != "votes":
                self.perturbed[name] = pa.array([p[name] for p in perturbations], kind)

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


def _votes(counted: list[dict[str, int]]) -> pa.Array:
    """Each perturbation's votes as a list of (response, count), in the order counted."""
    offsets = np.zeros(len(counted) + 1, np.int32)
    np.cumsum([len(v) for v in counted], out=offsets[1:])
    responses = pa.array([r for v in counted for r in v], TEXT)
    counts = pa.array([n for v in counted for n in v.values()], pa.int64())
    pairs = pa.StructArray.from_arrays([responses, counts], names=["response", "count"])
    return pa.ListArray.from_arrays(pa.array(offsets), pairs, type=VOTES)


class TableViews:
    """The Parquet files and paired TSVs of a release, written from each chunk's Members."""

    def __init__(self, project: Project, work: Path, opened: Callable[[str], HashingFile]):
        self.work, self.opened = work, opened
        self.field_names = list(project.field_names)
        self.free_text = project.is_free_text
        self.truth = "answers" if self.free_text else "label"
        truth = ("answers", pa.list_(TEXT)) if self.free_text else ("label", TEXT)
        changed = (f"{self.truth}_changed", pa.bool_())
        self.fields = pa.struct([(name, TEXT) for name in self.field_names])
        self.schemas = {
            "examples": pa.schema([
                ("id", TEXT), ("set_id", TEXT), ("role", TEXT), ("split", TEXT),
                *((name, TEXT) for name in self.field_names), truth, changed,
                ("tags", pa.list_(TEXT)), ("votes", VOTES),
            ]),
            "sets": pa.schema([
                ("set_id", TEXT), ("split", TEXT),
                ("original", pa.struct([("id", TEXT), ("fields", self.fields), truth])),
                ("perturbations", pa.list_(pa.struct([
                    ("id", TEXT), ("fields", self.fields), truth, changed,
                    ("tags", pa.list_(TEXT)), *EXTRA,
                ]))),
            ]),
        }  # fmt: skip
        self.paired = project.task_type == "classification" and len(self.field_names) == 1
        self.paired_header: list[str] = []
        self.writers: dict[str, pq.ParquetWriter] = {}
        self.tsvs: dict[str, tuple[HashingFile, HashingFile]] = {}
        self.pool = ThreadPoolExecutor(1)
        self.pending: Future[None] | None = None

    def add(self, records: list[dict[str, Any]]) -> None:
        """Write a chunk of set records on the thread, once the chunk before is written."""
        self.wait()
        self.pending = self.pool.submit(self._write, records)

    def wait(self) -> None:
        if self.pending is not None:
            pending, self.pending = self.pending, None
            pending.result()  # re-raises the thread's error

    def _write(self, records: list[dict[str, Any]]) -> None:
        by_split: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for record in records:
            by_split[record["split"]].append(record)
        for split, chunk in by_split.items():
            members = Members(chunk, self.field_names, self.free_text)
            self._parquet("examples", split, self._examples(members, split))
            self._parquet("sets", split, self._sets(members, split))
            if self.paired:
                self._tsv(members, split)

    def _examples(self, m: Members, split: str) -> pa.Table:
        """Originals and perturbations, each set's original first."""
        n_sets, n_perturbed = len(m.sizes), len(m.perturbed["id"])
        originals = {
            **m.originals, "role": pa.repeat("original", n_sets),
            f"{self.truth}_changed": pa.nulls(n_sets, pa.bool_()),
            "tags": pa.array([[]] * n_sets, pa.list_(TEXT)), "votes": _votes([{}] * n_sets),
        }  # fmt: skip
        perturbed = {**m.perturbed, "role": pa.repeat("perturbed", n_perturbed)}
        both = [
            pa.concat_arrays([originals[name], perturbed[name]]) if name != "split" else None
            for name in self.schemas["examples"].names
        ]
        # Row k of the originals goes before its set's perturbations, which follow in order.
        starts = np.zeros(n_sets, np.int64)
        np.cumsum(m.sizes[:-1] + 1, out=starts[1:])
        order = np.empty(n_sets + n_perturbed, np.int64)
        order[starts] = np.arange(n_sets)
        mask = np.ones(len(order), bool)
        mask[starts] = False
        order[mask] = n_sets + np.arange(n_perturbed)
        columns = [
            pa.repeat(split, len(order)) if column is None else column.take(order)
            for column in both
        ]
        return pa.Table.from_arrays(columns, schema=self.schemas["examples"])

    def _sets(self, m: Members, split: str) -> pa.Table:
        def fields(columns: dict[str, Any]) -> pa.StructArray:
            arrays = [columns[name] for name in self.field_names]
            return pa.StructArray.from_arrays(arrays, fields=list(self.fields))

        sets_type = self.schemas["sets"]
        original = pa.StructArray.from_arrays(
            [m.originals["id"], fields(m.originals), m.originals[self.truth]],
            fields=list(sets_type.field("original").type),
        )
        item = sets_type.field("perturbations").type.value_type
        inner = [fields(m.perturbed) if f.name == "fields" else m.perturbed[f.name] for f in item]
        offsets = np.zeros(len(m.sizes) + 1, np.int32)
        np.cumsum(m.sizes, out=offsets[1:])
        perturbations = pa.ListArray.from_arrays(
            pa.array(offsets), pa.StructArray.from_arrays(inner, fields=list(item)),
            type=sets_type.field("perturbations").type,
        )  # fmt: skip
        split_column = pa.repeat(split, len(m.sizes))
        columns = [m.originals["set_id"], split_column, original, perturbations]
        return pa.Table.from_arrays(columns, schema=sets_type)

    def _parquet(self, config: str, split: str, table: pa.Table) -> None:
        key = f"{config}/{split}"
        if key not in self.writers:
            path = self.work / "data" / config / f"{split}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            self.writers[key] = pq.ParquetWriter(path, self.schemas[config])
        self.writers[key].write_table(table)

    def _tsv(self, m: Members, split: str) -> None:
        """Line i of {split}_original.tsv is the original of line i of {split}_contrast.tsv."""
        if split not in self.tsvs:
            self.tsvs[split] = (
                self.opened(f"paired/{split}_original.tsv"),
                self.opened(f"paired/{split}_contrast.tsv"),
            )
            for target in self.tsvs[split]:
                target.write(tsv_line(self.paired_header))
        text = self.field_names[0]
        owners = np.repeat(np.arange(len(m.sizes)), m.sizes)
        originals = [m.originals[name].take(owners) for name in ("label", text)]
        contrast = [m.perturbed[name] for name in ("label", text)]
        for target, cells in zip(self.tsvs[split], (originals, contrast), strict=True):
            target.write(tsv_lines(cells))

    def finish(self) -> dict[str, str]:
        """Close the files once the last chunk is written. Their digests."""
        self.wait()
        self.pool.shutdown()
        digests = {}
        for key, writer in self.writers.items():
            writer.close()
            digests[f"data/{key}.parquet"] = file_sha256(self.work / "data" / f"{key}.parquet")
        for split, (orig, contrast) in self.tsvs.items():
            digests[f"paired/{split}_original.tsv"] = orig.close()
            digests[f"paired/{split}_contrast.tsv"] = contrast.close()
        return digests

    def close(self) -> None:
        """After an error: let the thread end and close the Parquet writers."""
        try:
            self.wait()
        finally:
            self.pool.shutdown()
            for writer in self.writers.values():
                writer.close()


def tsv_cells(values: pa.Array) -> pa.Array:
    """Each value as annotation.text.cells writes it in a TSV row: a line that starts like a
    formula (or with an apostrophe) gets an apostrophe, and a cell holding a tab, a line break
    or a quote is quoted. Cells of several lines, which are few, go through spreadsheet_cell."""
    text = pc.cast(values, TEXT)
    starts = pc.match_substring_regex(text, "^[=+\\-@\t\r']")
    cells = pc.if_else(starts, pc.binary_join_element_wise("'", text, ""), text)
    lines = pc.match_substring_regex(text, "[\r\n]")
    if pc.any(lines).as_py():
        indices = pc.indices_nonzero(lines)
        escaped = [spreadsheet_cell(v) for v in text.take(indices).to_pylist()]
        cells = pc.replace_with_mask(cells, lines, pa.array(escaped, TEXT))
    quoted = pc.binary_join_element_wise('"', pc.replace_substring(cells, '"', '""'), '"', "")
    return pc.if_else(pc.match_substring_regex(cells, '[\t\n\r"]'), quoted, cells)


def tsv_lines(columns: list[pa.Array]) -> bytes:
    """Rows of these columns as TSV lines (tsv_line's), in one buffer."""
    if not len(columns[0]):
        return b""
    cells = [tsv_cells(column) for column in columns]
    lines = pc.binary_join_element_wise(*cells, "\t")
    whole = pc.binary_join(pa.ListArray.from_arrays(pa.array([0, len(lines)], pa.int32()),
                                                     lines), "\n")  # fmt: skip
    return whole[0].as_buffer().to_pybytes() + b"\n"
