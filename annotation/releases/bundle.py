"""The release bundle format (docs/formats.md): the one module that writes it and reads it back.

A bundle is a zip of sets.jsonl (one contrast set per line), examples.jsonl (one example per
line), paired TSVs for single-text classification, lm-evaluation-harness tasks and Parquet
files (annotation.releases.exports), the dataset card and a SHA-256 manifest.
It is written once, a chunk of sets at a time, so that memory stays flat: as doccano's export
pipeline (dataset, formatters, writers), in one direction. A source gives typed chunks
(annotation.releases.members); `BundleWriter.write_data` counts each chunk once and hands it
to the files (annotation.releases.table), which format it (annotation.releases.lines, or
annotation.releases.records dict by dict) and write it; nothing calls back into the writer.
"""

import contextlib
import hashlib
import json
import shutil
import tempfile
import time
import zipfile
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from annotation.models import Project, Release
from annotation.releases.counts import Counts
from annotation.releases.files import HashingFile, file_sha256, zip_file, zip_member
from annotation.releases.members import Members
from annotation.releases.table import TableViews, paired_header

SETS_FILE = "sets.jsonl"
EXAMPLES_FILE = "examples.jsonl"
CARD_FILE = "README.md"
COMMENTS_FILE = "comments.jsonl"  # only when the release was asked to include comments


class BundleWriter:
    """Writes a release's bundle in a temporary folder: `write_data`, then `finish` with the
    card. Used as a context manager, which removes the folder."""

    def __init__(self, project: Project, release: Release):
        self.project = project
        self.release = release
        self.paired = project.task_type == "classification" and len(project.fields) == 1
        self.paired_header = paired_header(project) if self.paired else []
        self.counts = Counts()
        self.files: list[HashingFile] = []
        self.zipping: Future[None] | None = None
        self.views: TableViews | None = None
        self.extra: list[str] = []  # further files, zipped with the card

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

    def write_data(self, chunks: Iterable[Members]) -> None:
        """Write every data file of the release from its chunks of sets, in the release's
        (pivot) order, whichever source read them (annotation.releases.records from rows,
        annotation.releases.copied by SQL), counting what they hold (`counts`): each chunk's
        files are written on threads of their own (annotation.releases.table) while the source
        reads the next. sets.jsonl goes into the zip as it is written; then a thread adds the
        other files while the caller goes on (`finish`)."""
        (self.work / "paired").mkdir()
        self.zip = zipfile.ZipFile(self.work / "bundle.zip", "x", zipfile.ZIP_DEFLATED)
        sets_file = HashingFile(zip_member(self.zip, SETS_FILE))
        self.files.append(sets_file)
        examples_file = self._file(EXAMPLES_FILE)
        lines = (sets_file, examples_file)
        self.views = TableViews(self.project, self.work, self._file, lines, self.paired_header)
        for chunk in chunks:
            self.counts.add(chunk)
            self.views.add(chunk)
        views = self.views.finish(self.release)
        self.digests = {SETS_FILE: sets_file.close(), EXAMPLES_FILE: examples_file.close()}
        self.digests |= views
        pool = ThreadPoolExecutor(1)
        self.zipping = pool.submit(self._zip_files, sorted(set(self.digests) - {SETS_FILE}))
        pool.shutdown(wait=False)  # the thread ends with its one task

    def _zip_files(self, names: list[str]) -> None:
        for name in names:
            zip_file(self.zip, self.work / name, name)

    def _file(self, name: str) -> HashingFile:
        self.files.append(HashingFile((self.work / name).open("wb")))
        return self.files[-1]

    def add_lines(self, name: str, lines: Iterable[dict[str, Any]]) -> None:
        """A further file of JSON lines (a release's comments, when asked for), after
        `write_data`: hashed into the manifest and zipped with the card."""
        data = b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in lines)
        (self.work / name).write_bytes(data)
        self.digests[name] = hashlib.sha256(data).hexdigest()
        self.extra.append(name)

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
            for name in (CARD_FILE, *self.extra, "manifest.json"):
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
