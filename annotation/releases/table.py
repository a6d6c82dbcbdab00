"""A release as one table and its views (docs/performance.md): each chunk of contrast sets
becomes a columnar table (Arrow) of their members, one row per original and one per
perturbation, from which every file is derived by Arrow's own kernels and writers, in C:

- the sets' and the examples' JSON lines (annotation.releases.lines), byte for byte as orjson
  writes the bundle's dicts;
- `data/examples/{split}.parquet`: the members, originals first in each set (a classification
  project's lm_eval docs too: annotation.releases.exports);
- `data/sets/{split}.parquet`: the originals, each with its perturbations as a list (the
  perturbations' rows under the sets' offsets, not copied);
- `paired/{split}_{original,contrast}.tsv` (single-text classification): the originals'
  cells repeated once per perturbation beside the perturbations' own, escaped and quoted as
  annotation.text.cells writes a row.

Two threads of their own write them (Arrow lets go of the GIL), the lines on one and the
tables on the other, while the caller reads and builds the next chunk, one chunk at a time, so
that memory holds at most two chunks. A chunk whose fields are not plain (a member lacking
one, a field named as a column) has those lines written from its records, dict by dict
(annotation.releases.records), as have free-text and minimal-pair projects' lm_eval docs.
"""

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from annotation.models import Project, Release
from annotation.releases import records as by_records
from annotation.releases.exports import LmEvalExport
from annotation.releases.files import HashingFile, file_sha256
from annotation.releases.lines import Chunk, member_lines, offsets, tsv_lines
from annotation.releases.members import EXTRA, TEXT, VOTES, Members, votes_array
from annotation.text.cells import tsv_line


class TableViews:
    """A release's data files, each chunk's written from its Members (`add`) on threads of
    their own: `lines` (the sets' and the examples' JSON lines, open files of the bundle's),
    files opened by `opened(name)` in the bundle's folder, and the Parquet files there."""

    def __init__(
        self,
        project: Project,
        work: Path,
        opened: Callable[[str], HashingFile],
        lines: tuple[HashingFile, HashingFile],
        paired_header: list[str],
    ):
        self.work, self.opened, self.lines = work, opened, lines
        self.paired_header = paired_header
        self.lm_eval = LmEvalExport(project, work, opened)
        self.qa_pairs: dict[str, tuple[HashingFile, HashingFile]] = {}
        self.field_names = list(project.field_names)
        self.free_text = project.is_free_text
        self.truth = "answers" if self.free_text else "label"
        truth = ("answers", pa.list_(TEXT)) if self.free_text else ("label", TEXT)
        changed = (f"{self.truth}_changed", pa.bool_())
        self.fields = pa.struct([(name, TEXT) for name in self.field_names])
        self.schemas = {
            "examples": pa.schema(
                [
                    ("id", TEXT),
                    ("set_id", TEXT),
                    ("role", TEXT),
                    ("split", TEXT),
                    *((name, TEXT) for name in self.field_names),
                    truth,
                    changed,
                    ("tags", pa.list_(TEXT)),
                    ("votes", VOTES),
                ]
            ),
            "sets": pa.schema(
                [
                    ("set_id", TEXT),
                    ("split", TEXT),
                    ("original", pa.struct([("id", TEXT), ("fields", self.fields), truth])),
                    (
                        "perturbations",
                        pa.list_(
                            pa.struct(
                                [
                                    ("id", TEXT),
                                    ("fields", self.fields),
                                    truth,
                                    changed,
                                    ("tags", pa.list_(TEXT)),
                                    *EXTRA,
                                ]
                            )
                        ),
                    ),
                ]
            ),
        }
        self.paired = project.task_type == "classification" and len(self.field_names) == 1
        self.writers: dict[str, pq.ParquetWriter] = {}
        self.tsvs: dict[str, tuple[HashingFile, HashingFile]] = {}
        # The JSON lines on one thread, Parquet and TSV on another: each file in chunk order.
        self.pools = (ThreadPoolExecutor(1), ThreadPoolExecutor(1))
        self.pending: list[Future[None]] = []

    def add(self, m: Members) -> None:
        """Write a chunk on the threads, once the chunk before is written: its lines on one,
        its Parquet rows and paired TSVs on the other."""
        self.wait()
        self.pending = [self.pools[0].submit(self._lines, m), self.pools[1].submit(self._tables, m)]

    def wait(self) -> None:
        pending, self.pending = self.pending, []
        for future in pending:
            future.result()  # re-raises the thread's error

    def _lines(self, m: Members) -> None:
        """The chunk's JSON lines: from its columns where they are plain, else from its
        records, dict by dict; its lm_eval docs and a free-text project's paired answers from
        its records, where the docs are not the examples' rows (exports.plain_docs)."""
        if m.plain:
            self._write(*member_lines(m))
        else:
            assert m.records is not None, "a chunk without its records derives every line"
            self._write(*by_records.record_lines(m.records))
        if self.lm_eval.from_table:
            self.lm_eval.splits.update(m.splits)
        else:
            assert m.records is not None, "docs that are not the rows come from records"
            self.lm_eval.add_all(m.records)
        if self.free_text and m.records is not None:
            for split, pair in by_records.qa_pair_lines(m.records).items():
                if split not in self.qa_pairs:
                    self.qa_pairs[split] = (
                        self.opened(f"paired/{split}_original.jsonl"),
                        self.opened(f"paired/{split}_contrast.jsonl"),
                    )
                for target, data in zip(self.qa_pairs[split], pair, strict=True):
                    target.write(data)

    def _write(self, sets: Chunk, examples: Chunk) -> None:
        for target, data in zip(self.lines, (sets, examples), strict=True):
            target.write(data)

    def _tables(self, m: Members) -> None:
        """The chunk's rows in the Parquet files and the paired TSVs."""
        examples, sets = self._examples(m), self._sets(m)
        for split in m.splits:
            self._parquet("examples", split, examples.filter(pc.equal(examples["split"], split)))
            self._parquet("sets", split, sets.filter(pc.equal(sets["split"], split)))
            if self.paired:
                self._tsv(m, split)

    def _examples(self, m: Members) -> pa.Table:
        """Originals and perturbations, each set's original first."""
        n_sets, n_perturbed = len(m.sizes), len(m.owners)
        originals = {
            **m.originals,
            "role": pa.repeat("original", n_sets),
            f"{self.truth}_changed": pa.nulls(n_sets, pa.bool_()),
            "tags": pa.array([[]] * n_sets, pa.list_(TEXT)),
            "votes": votes_array([{}] * n_sets),
        }
        perturbed = {**m.perturbed, "role": pa.repeat("perturbed", n_perturbed)}
        columns = [
            m.in_order(originals[name], perturbed[name]) for name in self.schemas["examples"].names
        ]
        return pa.Table.from_arrays(columns, schema=self.schemas["examples"])

    def _sets(self, m: Members) -> pa.Table:
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
        perturbations = pa.ListArray.from_arrays(
            offsets(m.sizes),
            pa.StructArray.from_arrays(inner, fields=list(item)),
            type=sets_type.field("perturbations").type,
        )
        columns = [m.originals["set_id"], m.originals["split"], original, perturbations]
        return pa.Table.from_arrays(columns, schema=sets_type)

    def _parquet(self, config: str, split: str, table: pa.Table) -> None:
        key = f"{config}/{split}"
        if key not in self.writers:
            path = self.work / "data" / config / f"{split}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            # zstd: the texts in a third less than snappy's, for about the same CPU; the
            # zip stores these files as they are (files.STORED).
            self.writers[key] = pq.ParquetWriter(
                path, self.schemas[config], compression="zstd", compression_level=1
            )
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
        mine = pc.equal(m.perturbed["split"], split)
        owners = pa.array(m.owners).filter(mine)
        originals = [m.originals[name].take(owners) for name in ("label", text)]
        contrast = [m.perturbed[name].filter(mine) for name in ("label", text)]
        for target, cells in zip(self.tsvs[split], (originals, contrast), strict=True):
            target.write(tsv_lines(cells))

    def finish(self, release: Release) -> dict[str, str]:
        """Close the files once the last chunk is written (the bundle closes `lines`). Their
        digests, with the lm_eval tasks'."""
        self.wait()
        for pool in self.pools:
            pool.shutdown()
        digests = self.lm_eval.finish(release)
        for split, files in self.qa_pairs.items():
            for file, side in zip(files, ("original", "contrast"), strict=True):
                digests[f"paired/{split}_{side}.jsonl"] = file.close()
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
            for pool in self.pools:
                pool.shutdown()
            for writer in self.writers.values():
                writer.close()


def paired_header(project: Project) -> list[str]:
    """The paired TSVs' header: the columns of the project's latest paired TSV import (IMDb's
    Sentiment and Text), or label and the field's name."""
    name = project.field_names[0]
    batch = project.import_batches.filter(format="paired_tsv").order_by("-created_at").first()
    columns = batch.mapping if batch is not None else {}
    return [columns.get("label", "label"), columns.get(name, name)]
