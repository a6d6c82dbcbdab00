"""The release bundle format (docs/formats.md): the one module that writes it and reads it back.

A bundle is a zip of sets.jsonl (one contrast set per line), examples.jsonl (one example per
line), paired TSVs for single-text classification, lm-evaluation-harness tasks and Parquet
files (annotation.releases.exports), the dataset card and a SHA-256 manifest.
It is written once, set by set, so that memory stays flat.
"""

import contextlib
import hashlib
import json
import shutil
import tempfile
import time
import zipfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings

from annotation.models import Project, Release, release_id
from annotation.releases.exports import LmEvalExport
from annotation.releases.files import HashingFile, file_sha256, zip_file, zip_member
from annotation.releases.members import Members
from annotation.releases.table import Chunk, TableViews, paired_header
from annotation.text.answers import AnswerRules

SETS_FILE = "sets.jsonl"
EXAMPLES_FILE = "examples.jsonl"
CARD_FILE = "README.md"
AGREE = "agree"  # free-text vote counts: responses that agree with the released answers
LINE = orjson.OPT_APPEND_NEWLINE
SETS_AT_ONCE = 2000  # sets a chunk: its table and its lines, then the next


@dataclass(slots=True)  # a release may hold a million of them
class Chosen:
    """One perturbation a release holds, with its set, split, label and counted votes."""

    perturbation_id: int
    pivot_id: int
    author_id: int
    set_id: str
    split: str
    label: str
    votes: dict[str, int] = field(default_factory=dict)
    answers: list[str] = field(default_factory=list)  # free-text projects, instead of label


# A released perturbation with its pivot's row and its own (tags included), as dicts.
Row = tuple[Chosen, dict[str, Any], dict[str, Any]]


class BundleWriter:
    """Writes a release's bundle in a temporary folder: `write_data`, then `finish` with the
    card. Used as a context manager, which removes the folder."""

    def __init__(self, project: Project, release: Release, authors: dict[int, str]):
        self.project = project
        self.authors_named = authors
        self.release = release
        self.free_text = project.is_free_text
        self.answer_rules = AnswerRules.of(project)
        self.paired = project.task_type == "classification" and len(project.fields) == 1
        self.paired_header = paired_header(project) if self.paired else []
        self.counts: dict[str, Any] = {
            "sets": Counter(),
            "perturbations": Counter(),
            "labels": defaultdict(Counter),
            "label_changed": Counter(),
            "original_labels": defaultdict(Counter),
            "tags": defaultdict(Counter),
            "sets_of_one": Counter(),
        }
        self.seconds: list[int] = []
        self.guidelines: Counter[int] = Counter()
        self.authors: set[int] = set()
        self.files: list[HashingFile] = []
        self.zipping: Future[None] | None = None
        self.views: TableViews | None = None
        self.qa_pairs: dict[str, tuple[HashingFile, HashingFile]] = {}

    def __enter__(self) -> "BundleWriter":
        self.root = Path(settings.MEDIA_ROOT) / "releases" / self.project.slug
        self.root.mkdir(parents=True, exist_ok=True)
        self.work = Path(tempfile.mkdtemp(prefix=".building-", dir=self.root))
        return self

    def __exit__(self, *exc: object) -> None:
        # After an error: stop the files' threads and close the zip before removing them.
        if self.views is not None:
            with contextlib.suppress(Exception):
                self.views.close()
        for file in self.files:
            with contextlib.suppress(Exception):
                file.close()
        if self.zipping is not None:
            with contextlib.suppress(Exception):
                self.zipping.result()
        with contextlib.suppress(Exception):
            self.zip.close()
        shutil.rmtree(self.work, ignore_errors=True)

    def write_data(
        self,
        rows: Iterable[Row],
        alone: Iterable[dict[str, Any]] = (),
        columns: Iterable[Members] = (),
    ) -> None:
        """Write the data files from the release's rows in pivot order (or its chunks in
        `columns`, counted by their reader: annotation.releases.copied), then its sets of one
        (`alone`: originals with no perturbation, services.sets_of_one), counting what they hold
        (`counts_summary`, `seconds`), SETS_AT_ONCE sets at a time: every file is derived from
        each chunk's table on a thread of its own (annotation.releases.table) while this one
        reads the next. sets.jsonl goes into the zip as it is written; then a thread adds the
        other files while the caller goes on (`finish`)."""
        (self.work / "paired").mkdir()
        self.zip = zipfile.ZipFile(self.work / "bundle.zip", "x", zipfile.ZIP_DEFLATED)
        self.sets_file = HashingFile(zip_member(self.zip, SETS_FILE))
        self.files.append(self.sets_file)
        self.examples_file = self._file(EXAMPLES_FILE)
        self.lm_eval = LmEvalExport(self.project, self.work, self._file)
        self.views = TableViews(self.project, self.work, self._file, self, self.paired_header)
        for members in columns:
            self.views.add_members(members)
        records = chain(self._sets(rows), (self._set_of_one(o) for o in alone))
        while chunk := list(islice(records, SETS_AT_ONCE)):
            self.views.add(chunk)
        views = self.views.finish()
        self.digests = {SETS_FILE: self.sets_file.close()}
        self.digests[EXAMPLES_FILE] = self.examples_file.close()
        for split, (orig, contrast) in self.qa_pairs.items():
            self.digests[f"paired/{split}_original.jsonl"] = orig.close()
            self.digests[f"paired/{split}_contrast.jsonl"] = contrast.close()
        self.digests |= self.lm_eval.finish(self.release) | views
        pool = ThreadPoolExecutor(1)
        self.zipping = pool.submit(self._zip_files, sorted(set(self.digests) - {SETS_FILE}))
        pool.shutdown(wait=False)  # the thread ends with its one task

    def write_lines(self, sets: Chunk, examples: Chunk, docs: dict[str, Chunk] | None) -> None:
        """A chunk's lines, derived from its table (annotation.releases.table)."""
        self.sets_file.write(sets)
        self.examples_file.write(examples)
        for split, data in (docs or {}).items():
            self.lm_eval.write(split, data)

    def write_records(self, records: list[dict[str, Any]], lines: bool) -> None:
        """What a chunk's table does not derive, dict by dict: its lm_eval docs, a QA
        project's pairs and, if `lines`, its sets' and examples' lines."""
        if lines:
            self.sets_file.write(b"".join(orjson.dumps(r, option=LINE) for r in records))
            examples = [orjson.dumps(e, option=LINE) for r in records for e in _flatten(r)]
            self.examples_file.write(b"".join(examples))
        self.lm_eval.add_all(records)
        if self.free_text:
            for record in records:
                self._write_qa_pairs(self.qa_pairs, record)

    def _zip_files(self, names: list[str]) -> None:
        for name in names:
            zip_file(self.zip, self.work / name, name)

    def _file(self, name: str) -> HashingFile:
        self.files.append(HashingFile((self.work / name).open("wb")))
        return self.files[-1]

    def finish(self, card: str) -> None:
        """Add the card and the manifest to the zip once the data files are in, and record it
        on the release. Each file is compressed once."""
        (self.work / CARD_FILE).write_text(card, encoding="utf-8")
        self.digests[CARD_FILE] = hashlib.sha256(card.encode("utf-8")).hexdigest()
        manifest = json.dumps(
            {"files": self.digests, "algorithm": "sha256"}, indent=2, sort_keys=True
        )
        (self.work / "manifest.json").write_text(manifest + "\n", encoding="utf-8")
        assert self.zipping is not None, "write_data comes first"
        self.zipping.result()  # re-raises the thread's error, if any
        with self.zip as bundle:
            for name in (CARD_FILE, "manifest.json"):
                zip_file(bundle, self.work / name, name)
        target = self.root / f"{self.release.version}.zip"
        if target.exists():
            # Versions are unique, so no release owns this file: it is left from a database
            # that was reset, or from an attempt that failed after writing it. A bundle is
            # never overwritten: that one is kept aside.
            target.rename(target.with_name(f"{target.name}.orphan-{time.time_ns()}"))
        (self.work / "bundle.zip").rename(target)
        target.chmod(0o444)  # written once, never changed
        self.release.bundle = str(target.relative_to(settings.MEDIA_ROOT))
        self.release.sha256 = file_sha256(target)
        self.release.manifest = self.digests

    def _write_qa_pairs(self, paired: dict, record: dict[str, Any]) -> None:
        """QA sets (docs/task-types.md): line i of {split}_original.jsonl pairs with line i of
        {split}_contrast.jsonl, as the TSVs do for single-text classification."""
        split = record["split"]
        if split not in paired:
            paired[split] = (
                self._file(f"paired/{split}_original.jsonl"),
                self._file(f"paired/{split}_contrast.jsonl"),
            )
        orig, contrast = paired[split]
        original = record["original"]
        for p in record["perturbations"]:
            for target, member in ((orig, original), (contrast, p)):
                line = {"id": member["id"], **member["fields"], "answers": member["answers"]}
                target.write(orjson.dumps(line, option=LINE))

    def _sets(self, rows: Iterable[Row]) -> Iterator[dict[str, Any]]:
        """One record per set, in the release's (pivot) order."""
        pivot: dict[str, Any] | None = None
        members: list[Chosen] = []
        perturbations: dict[int, dict[str, Any]] = {}
        for chosen, pivot_row, perturbation in rows:
            if pivot is not None and pivot_row["id"] != pivot["id"]:
                yield self._set_record(pivot, members, perturbations, self.authors_named)
                members, perturbations = [], {}
            pivot = pivot_row
            perturbations[perturbation["id"]] = perturbation
            members.append(chosen)
        if pivot is not None:
            yield self._set_record(pivot, members, perturbations, self.authors_named)

    def _set_of_one(self, original: dict[str, Any]) -> dict[str, Any]:
        """An original released as a set of its own (annotation.models.SET_OF_ONE)."""
        self.counts["sets_of_one"][original["split"]] += 1
        return self._set_record(original, [], {}, {}, original["split"])

    def _set_record(
        self,
        pivot: dict[str, Any],
        members: list[Chosen],
        perturbations: dict[int, dict[str, Any]],
        authors: dict[int, str],
        split: str = "",
    ) -> dict[str, Any]:
        split = split or members[0].split
        key = "answers" if self.free_text else "label"
        self.counts["sets"][split] += 1
        if not self.free_text:
            self.counts["original_labels"][split][pivot["label"]] += 1
        items = []
        for c in members:
            p = perturbations[c.perturbation_id]
            tags = sorted(p["tag_names"])
            total = sum(c.votes.values())
            if self.free_text:
                changed = not self.answer_rules.same(c.answers, pivot["answers"])
            else:
                changed = c.label != pivot["label"]
                self.counts["labels"][split][c.label] += 1
            self.counts["perturbations"][split] += 1
            self.counts["label_changed"][split] += changed
            for tag in tags:
                self.counts["tags"][split][tag] += 1
            self.seconds.append(p["seconds_spent"])
            self.guidelines[p["guideline_version"]] += 1
            self.authors.add(c.author_id)
            items.append(
                {
                    "id": release_id(p["external_id"], p["id"]),
                    "fields": p["fields"],
                    key: c.answers if self.free_text else c.label,
                    f"{key}_changed": changed,
                    "tags": tags,
                    "rationale": p["rationale"],
                    "author": authors[c.author_id],
                    "votes": c.votes,
                    "agreement": round(c.votes.get(c.label or AGREE, 0) / total, 4)
                    if total
                    else None,
                    "edit_distance": round(p["edit_distance"], 4),
                    "seconds_spent": p["seconds_spent"],
                    "guideline_version": p["guideline_version"],
                }
            )
        original = {"id": pivot["external_id"], "fields": pivot["fields"], key: pivot[key]}
        return {
            "set_id": pivot["external_id"],
            "split": split,
            "original": original,
            "perturbations": items,
        }

    def counts_summary(self) -> dict[str, Any]:
        c = self.counts
        return {
            "sets": dict(c["sets"]),
            "perturbations": dict(c["perturbations"]),
            "labels": {s: dict(v) for s, v in c["labels"].items()},
            "label_changed": {s: c["label_changed"].get(s, 0) for s in c["perturbations"]},
            "original_labels": {s: dict(v) for s, v in c["original_labels"].items()},
            "tags": {s: dict(v) for s, v in c["tags"].items()},
            "sets_of_one": dict(c["sets_of_one"]),
            "guideline_versions": {str(k): v for k, v in sorted(self.guidelines.items())},
            "experts": len(self.authors),
        }


def _flatten(record: dict[str, Any]) -> Iterator[dict[str, Any]]:
    original = record["original"]
    key = "answers" if "answers" in original else "label"
    yield {
        "id": original["id"],
        "set_id": record["set_id"],
        "role": "original",
        "split": record["split"],
        **original["fields"],
        key: original[key],
        f"{key}_changed": None,
        "tags": [],
        "votes": {},
    }
    for p in record["perturbations"]:
        yield {
            "id": p["id"],
            "set_id": record["set_id"],
            "role": "perturbed",
            "split": record["split"],
            **p["fields"],
            key: p[key],
            f"{key}_changed": p[f"{key}_changed"],
            "tags": p["tags"],
            "votes": p["votes"],
        }


# Reading ---------------------------------------------------------------------------------------


@dataclass
class SetRecord:
    """One line of sets.jsonl, checked for shape only: the project's rules are the caller's."""

    set_id: str
    split: str
    original: dict[str, Any]  # id, fields, label (or answers)
    perturbations: list[dict[str, Any]]  # fields, label or answers, tags (and more if released)


def parse_set_record(record: Any) -> SetRecord | str:
    """A SetRecord, or what is wrong with the line's shape."""
    if not isinstance(record, dict) or not isinstance(record.get("original"), dict):
        return "each line must be a set with an 'original' object."
    original = record["original"]
    perturbations = record.get("perturbations")
    if not isinstance(perturbations, list):
        return "perturbations must be a list (empty for a set of one: an original alone)."
    if not all(isinstance(p, dict) for p in perturbations):
        return "each perturbation must be an object."
    set_id = str(original.get("id") or record.get("set_id") or "").strip()
    split = record.get("split", "test")
    return SetRecord(set_id, split, original, perturbations)


def read_sets(release: Release) -> Iterator[SetRecord]:
    """The contrast sets of a release, read from its own bundle."""
    path = Path(settings.MEDIA_ROOT) / release.bundle
    with zipfile.ZipFile(path) as bundle, bundle.open(SETS_FILE) as handle:
        for line in handle:
            parsed = parse_set_record(json.loads(line))
            assert isinstance(parsed, SetRecord), f"{path} is not a release bundle: {parsed}"
            yield parsed


def read_examples(release: Release, split: str) -> list[dict[str, Any]]:
    """The examples of one split of a release, originals first in each set: id, set_id, role,
    fields, label (or answers, for free text) and tags."""
    out: list[dict[str, Any]] = []
    for record in read_sets(release):
        if record.split != split:
            continue
        members = [
            {**record.original, "role": "original", "tags": []},
            *({**p, "role": "perturbed"} for p in record.perturbations),
        ]
        out.extend(
            {
                "id": member["id"],
                "set_id": record.set_id,
                "role": member["role"],
                "fields": member["fields"],
                "label": member.get("label", ""),
                "answers": member.get("answers", []),
                "tags": member["tags"],
            }
            for member in members
        )
    return out
