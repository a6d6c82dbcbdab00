"""A release as one table and its views (docs/performance.md): each chunk of contrast sets
becomes a columnar table (Arrow) of their members, one row per original and one per
perturbation, from which every file is derived by Arrow's own kernels and writers, in C:

- the sets' and the examples' JSON lines and the lm_eval docs (annotation.releases.lines),
  byte for byte as orjson writes the bundle's dicts;
- `data/examples/{split}.parquet`: the members, originals first in each set;
- `data/sets/{split}.parquet`: the originals, each with its perturbations as a list (the
  perturbations' rows under the sets' offsets, not copied);
- `paired/{split}_{original,contrast}.tsv` (single-text classification): the originals'
  cells repeated once per perturbation beside the perturbations' own, escaped and quoted as
  annotation.text.cells writes a row.

A thread of its own writes them (Arrow lets go of the GIL) while the caller reads and builds
the next chunk, one chunk at a time, so that memory holds at most two chunks. A chunk whose
fields are not plain (a member lacking one, a field named as a column) or a project whose
lm_eval docs are not plain classification has those lines written by the bundle, dict by dict.
"""

import re
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from annotation.models import Project
from annotation.prompting import Prompting
from annotation.releases import lines
from annotation.releases.files import HashingFile, file_sha256
from annotation.releases.lines import tsv_lines
from annotation.releases.members import EXTRA, TEXT, VOTES, Members, votes_array
from annotation.text.cells import tsv_line

Chunk = bytes | memoryview  # a chunk's lines, as annotation.releases.lines.buffer gives them


class Lines(Protocol):
    """Where the JSON lines go (the bundle): as bytes, or a chunk's dicts to write itself."""

    def write_lines(self, sets: Chunk, examples: Chunk, docs: dict[str, Chunk] | None) -> None: ...

    def write_records(self, records: list[dict[str, Any]], lines: bool) -> None: ...


class TableViews:
    """A release's files, written from each chunk's Members on a thread of their own."""

    def __init__(
        self,
        project: Project,
        work: Path,
        opened: Callable[[str], HashingFile],
        sink: Lines,
        paired_header: list[str],
    ):
        self.work, self.opened, self.sink = work, opened, sink
        self.paired_header = paired_header
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
        # The lm_eval docs of classification (not minimal pairs, not free text) from columns.
        self.prompting = Prompting.of(project)
        self.choices = orjson.dumps(self.prompting.words).decode() if plain_docs(project) else ""
        self.gold = pa.array(list(project.labels), TEXT)
        self.writers: dict[str, pq.ParquetWriter] = {}
        self.tsvs: dict[str, tuple[HashingFile, HashingFile]] = {}
        # The JSON lines on one thread, Parquet and TSV on another: each file in chunk order.
        self.pools = (ThreadPoolExecutor(1), ThreadPoolExecutor(1))
        self.pending: list[Future[None]] = []

    def add(self, records: list[dict[str, Any]]) -> None:
        """Write a chunk of set records on the thread, once the chunk before is written."""
        self.wait()
        self.pending = [self.pools[0].submit(self._write, records)]

    def wait(self) -> None:
        pending, self.pending = self.pending, []
        for future in pending:
            future.result()  # re-raises the thread's error

    def add_members(self, m: Members) -> None:
        """`add` for a chunk already in columns, plain, whose docs are plain too."""
        assert m.plain and self.choices, "a chunk without its records derives every file"
        self.wait()
        self.pending = [
            self.pools[0].submit(self._json_lines, m, True),
            self.pools[1].submit(self._tables, m),
        ]

    def _write(self, records: list[dict[str, Any]]) -> None:
        self._derive(Members(records, self.field_names, self.free_text), records)

    def _derive(self, m: Members, records: list[dict[str, Any]]) -> None:
        docs = bool(self.choices) and m.plain
        if m.plain:
            self._json_lines(m, docs)
        if not docs:
            self.sink.write_records(records, lines=not m.plain)
        self._tables(m)

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
            _offsets(m.sizes),
            pa.StructArray.from_arrays(inner, fields=list(item)),
            type=sets_type.field("perturbations").type,
        )
        columns = [m.originals["set_id"], m.originals["split"], original, perturbations]
        return pa.Table.from_arrays(columns, schema=sets_type)

    def _json_lines(self, m: Members, docs: bool) -> None:
        """The chunk's sets and examples as JSON lines, and its lm_eval docs by split."""
        assert m.field_order is not None
        texts = {
            name: [lines.escaped(side[name]) for side in (m.originals, m.perturbed)]
            for name in m.field_order
        }  # the fields' texts, escaped once
        o, p = (
            {
                name: lines.quoted(texts[name][k]) if name in texts else _json(name, column)
                for name, column in side.items()
            }
            for k, side in enumerate((m.originals, m.perturbed))
        )
        for side in (o, p):
            side["fields"] = lines.objects([(name, side[name]) for name in m.field_order])
        original = lines.objects([("id", o["id"]), ("fields", o["fields"]), ("label", o["label"])])
        perturbation = lines.objects(
            [
                (name, p[name])
                for name in (
                    "id",
                    "fields",
                    "label",
                    "label_changed",
                    "tags",
                    "rationale",
                    "author",
                    "votes",
                    "agreement",
                    "edit_distance",
                    "seconds_spent",
                    "guideline_version",
                )
            ]
        )
        sets = lines.objects(
            [
                ("set_id", o["set_id"]),
                ("split", o["split"]),
                ("original", original),
                ("perturbations", lines.listed(perturbation, _offsets(m.sizes))),
            ]
        )
        fields = [(name, m.in_order(o[name], p[name])) for name in m.field_order]
        head = [(name, m.in_order(o[name], p[name])) for name in ("id", "set_id")]
        role = m.in_order(
            pa.repeat('"original"', len(m.sizes)), pa.repeat('"perturbed"', len(m.owners))
        )
        split = m.in_order(o["split"], p["split"])
        label = m.in_order(o["label"], p["label"])
        tail = [
            ("label", label),
            ("label_changed", m.in_order(pa.repeat("null", len(m.sizes)), p["label_changed"])),
            ("tags", m.in_order(pa.repeat("[]", len(m.sizes)), p["tags"])),
            ("votes", m.in_order(pa.repeat("{}", len(m.sizes)), p["votes"])),
        ]
        examples = lines.objects([*head, ("role", role), ("split", split), *fields, *tail])
        by_split: dict[str, Chunk] | None = None
        if docs:
            query = self._queries(m, {n: m.in_order(*texts[n]) for n in texts})
            gold = lines.numbers(
                pc.index_in(
                    m.in_order(m.originals["label"], m.perturbed["label"]), value_set=self.gold
                )
            )
            doc = lines.objects(
                [
                    ("set_id", head[1][1]),
                    ("split", split),
                    ("id", head[0][1]),
                    ("role", role),
                    *fields,
                    ("query", query),
                    ("label", label),
                    ("choices", self.choices),
                    ("gold", gold),
                ]
            )
            member_split = m.in_order(m.originals["split"], m.perturbed["split"])
            by_split = {s: lines.buffer(doc.filter(pc.equal(member_split, s))) for s in m.splits}
        self.sink.write_lines(lines.buffer(sets), lines.buffer(examples), by_split)

    def _queries(self, m: Members, texts: dict[str, pa.Array]) -> pa.Array:
        """The prompt rendered over each member's fields (Prompting.render), in member order,
        as JSON: the prompt is rendered once over markers, and the fields' escaped texts take
        their place (escaping a text escapes each of its pieces)."""
        names = self.field_names
        marked = self.prompting.render({n: f"\x00{j}\x00" for j, n in enumerate(names)})
        pieces: list[Any] = []
        for j, piece in enumerate(re.split("\x00(\\d+)\x00", marked)):
            if j % 2:
                pieces.append(pc.fill_null(texts[names[int(piece)]], ""))
            elif piece:
                pieces.append(orjson.dumps(piece).decode()[1:-1])
        if not any(isinstance(piece, pa.Array) for piece in pieces):
            return pa.repeat(orjson.dumps("".join(pieces)).decode(), len(m.order))
        return pc.binary_join_element_wise('"', *pieces, '"', "")

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
        mine = pc.equal(m.perturbed["split"], split)
        owners = pa.array(m.owners).filter(mine)
        originals = [m.originals[name].take(owners) for name in ("label", text)]
        contrast = [m.perturbed[name].filter(mine) for name in ("label", text)]
        for target, cells in zip(self.tsvs[split], (originals, contrast), strict=True):
            target.write(tsv_lines(cells))

    def finish(self) -> dict[str, str]:
        """Close the files once the last chunk is written. Their digests."""
        self.wait()
        for pool in self.pools:
            pool.shutdown()
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


def plain_docs(project: Project) -> bool:
    """Whether the project's lm_eval docs derive from columns: classification with labels,
    and a prompt without _queries' markers."""
    plain = project.task_type == "classification" and not project.is_free_text
    return plain and "\x00" not in Prompting.of(project).prompt


def _offsets(sizes: np.ndarray) -> pa.Array:
    offsets = np.zeros(len(sizes) + 1, np.int32)
    np.cumsum(sizes, out=offsets[1:])
    return pa.array(offsets)


def _json(name: str, column: pa.Array) -> pa.Array:
    """A column's values as JSON texts."""
    kind = column.type
    if name in ("split", "label", "author"):
        return lines.few_strings(column)
    if pa.types.is_string(kind):
        return lines.strings(column)
    if pa.types.is_boolean(kind):
        return lines.booleans(column)
    if pa.types.is_list(kind) and pa.types.is_struct(kind.value_type):
        return lines.counts(column)
    if pa.types.is_list(kind):
        return lines.string_lists(column)
    return lines.numbers(column)
