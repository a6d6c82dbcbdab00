"""Releases (SPEC §3E, §5): immutable, versioned bundles of accepted contrast sets.

A release is chosen in one pass over the accepted perturbations, recorded as ReleaseEntry rows,
then written once to a zip under MEDIA_ROOT, set by set, so that memory stays flat.
"""

import csv
import hashlib
import io
import json
import random
import shutil
import statistics
import tempfile
import zipfile
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Max
from django.utils import timezone

from annotation.audit import audit
from annotation.models import (
    Example,
    Perturbation,
    Project,
    Pseudonym,
    Release,
    ReleaseEntry,
    Vote,
)
from annotation.schema import SPLITS
from annotation.stats import agreement_block

CHUNK = 1000


@dataclass
class Chosen:
    perturbation_id: int
    pivot_id: int
    set_id: str
    split: str
    label: str
    votes: dict[str, int] = field(default_factory=dict)


def clean_options(project: Project, options: dict[str, Any]) -> dict[str, Any]:
    strategy = options.get("split_strategy") or "pivot"
    if strategy not in ("pivot", "random"):
        raise ValidationError("split_strategy must be pivot or random.")
    seed = options.get("seed") or 0
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValidationError("seed must be an integer.")
    proportions = options.get("proportions") or {"test": 1.0}
    if strategy == "random":
        if not isinstance(proportions, dict) or set(proportions) - set(SPLITS):
            raise ValidationError(f"proportions must map splits ({', '.join(SPLITS)}) to shares.")
        values = list(proportions.values())
        if (
            any(not isinstance(v, int | float) or v < 0 for v in values)
            or abs(sum(values) - 1) > 1e-6
        ):
            raise ValidationError("proportions must be non-negative and add up to 1.")
    given = options.get("min_agreement") or {}
    if not isinstance(given, dict) or set(given) - set(SPLITS):
        raise ValidationError("min_agreement must map splits to a number of votes.")
    votes_per_item = project.setting("votes_per_item")
    min_agreement = {s: given.get(s, project.min_agreement_for(s)) for s in SPLITS}
    for split, value in min_agreement.items():
        if (
            not isinstance(value, int)
            or isinstance(value, bool)
            or not 0 <= value <= votes_per_item
        ):
            raise ValidationError(f"min_agreement for {split} must be from 0 to {votes_per_item}.")
    return {
        "split_strategy": strategy,
        "seed": seed,
        "proportions": proportions if strategy == "random" else None,
        "min_agreement": min_agreement,
    }


def _vote_counts(perturbation_ids: list[int]) -> dict[int, dict[str, int]]:
    counts: dict[int, dict[str, int]] = defaultdict(dict)
    for start in range(0, len(perturbation_ids), 5000):
        rows = (
            Vote.objects.filter(
                item__perturbation_id__in=perturbation_ids[start : start + 5000], counts=True
            )
            .values_list("item__perturbation_id", "label")
            .annotate(n=Count("id"))
            .order_by()
        )
        for pid, label, n in rows:
            counts[pid][label] = n
    return counts


def choose(project: Project, options: dict[str, Any]) -> list[Chosen]:
    """The accepted perturbations a release holds, each with its set, split and label."""
    rows = list(
        Perturbation.objects.filter(project=project, status=Perturbation.Status.ACCEPTED)
        .order_by("pivot_id", "id")
        .values_list(
            "id", "pivot_id", "pivot__external_id", "pivot__split", "label", "majority_label"
        )
    )
    votes = _vote_counts([row[0] for row in rows])
    split_of = _split_sets(sorted({row[1] for row in rows}), options)
    chosen = []
    for pid, pivot_id, set_id, pivot_split, label, majority in rows:
        split = split_of.get(pivot_id, pivot_split)
        release_label = majority or label
        counted = votes.get(pid, {})
        # Sets imported as accepted have no votes; they pass on the admin's word.
        if counted and counted.get(release_label, 0) < options["min_agreement"][split]:
            continue
        chosen.append(Chosen(pid, pivot_id, set_id, split, release_label, counted))
    return chosen


def _split_sets(pivot_ids: list[int], options: dict[str, Any]) -> dict[int, str]:
    """Whole sets go to one split: the pivot's own (empty map), or seeded random shares."""
    if options["split_strategy"] == "pivot":
        return {}
    shuffled = list(pivot_ids)
    random.Random(options["seed"]).shuffle(shuffled)
    out, start = {}, 0
    splits = [s for s in SPLITS if options["proportions"].get(s)]
    for n, split in enumerate(splits):
        share = options["proportions"][split]
        end = len(shuffled) if n == len(splits) - 1 else start + round(share * len(shuffled))
        out.update(dict.fromkeys(shuffled[start:end], split))
        start = end
    return out


def pseudonyms(project: Project, kind: str, user_ids: set[int]) -> dict[int, str]:
    """Stable public names, created on first release: expert-1, validator-7, ..."""
    known = dict(
        Pseudonym.objects.filter(project=project, kind=kind).values_list("user_id", "number")
    )
    missing = sorted(user_ids - set(known))
    if missing:
        top = Pseudonym.objects.filter(project=project, kind=kind).aggregate(m=Max("number"))["m"]
        new = [
            Pseudonym(project=project, user_id=uid, kind=kind, number=(top or 0) + n)
            for n, uid in enumerate(missing, start=1)
        ]
        Pseudonym.objects.bulk_create(new)
        known.update({p.user_id: p.number for p in new})
    return {uid: f"{kind}-{number}" for uid, number in known.items() if uid in user_ids}


@transaction.atomic
def release_create(*, project: Project, user: Any, version: str, **options: Any) -> Release:
    version = str(version).strip()
    if not version or len(version) > 32 or "/" in version:
        raise ValidationError("version must be 1-32 characters without '/'.")
    if Release.objects.filter(project=project, version=version).exists():
        raise ValidationError(f"version {version} exists; releases never change, pick a new one.")
    cleaned = clean_options(project, options)
    chosen = choose(project, cleaned)
    if not chosen:
        raise ValidationError("no accepted perturbation passes the release filters.")
    release = Release.objects.create(
        project=project,
        version=version,
        created_by=user if getattr(user, "is_authenticated", False) else None,
        options=cleaned,
    )
    ReleaseEntry.objects.bulk_create(
        (
            ReleaseEntry(
                release=release,
                perturbation_id=c.perturbation_id,
                set_id=c.set_id,
                split=c.split,
                label=c.label,
            )
            for c in chosen
        ),
        batch_size=5000,
    )
    BundleWriter(project, release, chosen).write()
    audit(actor=user, action="release_created", project=project, release=release.pk,
          version=version, perturbations=len(chosen))  # fmt: skip
    return release


class HashingFile:
    """A text file that hashes what it writes (SHA-256), for the manifest."""

    def __init__(self, path: Path):
        self.path = path
        self.handle: TextIO = path.open("w", encoding="utf-8", newline="")
        self.digest = hashlib.sha256()

    def write(self, text: str) -> None:
        self.handle.write(text)
        self.digest.update(text.encode("utf-8"))

    def close(self) -> str:
        self.handle.close()
        return self.digest.hexdigest()


class BundleWriter:
    """Writes sets.jsonl, examples.jsonl, paired TSVs, the dataset card and the manifest."""

    def __init__(self, project: Project, release: Release, chosen: list[Chosen]):
        self.project = project
        self.release = release
        self.chosen = chosen
        self.paired = project.task_type == "classification" and len(project.fields) == 1
        self.counts: dict[str, Any] = {
            "sets": Counter(),
            "perturbations": Counter(),
            "labels": defaultdict(Counter),
            "original_labels": defaultdict(Counter),
            "tags": defaultdict(Counter),
        }
        self.seconds: list[int] = []
        self.guidelines: Counter[int] = Counter()
        self.authors: set[int] = set()

    def write(self) -> None:
        root = Path(settings.MEDIA_ROOT) / "releases" / self.project.slug
        root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".building-", dir=root))
        try:
            digests = self._write_files(work)
            target = root / f"{self.release.version}.zip"
            # Level 1 deflate: a fraction of the default's time, for a slightly larger file.
            with zipfile.ZipFile(target, "x", zipfile.ZIP_DEFLATED, compresslevel=1) as bundle:
                for name in [*sorted(digests), "manifest.json"]:
                    bundle.write(work / name, arcname=name)
            target.chmod(0o444)  # written once, never changed
        finally:
            shutil.rmtree(work, ignore_errors=True)
        self.release.bundle = str(target.relative_to(settings.MEDIA_ROOT))
        self.release.sha256 = _file_sha256(target)
        self.release.manifest = digests
        self.release.save(update_fields=["bundle", "sha256", "manifest", "counts", "statistics"])

    def _write_files(self, work: Path) -> dict[str, str]:
        (work / "paired").mkdir()
        sets_file = HashingFile(work / "sets.jsonl")
        examples_file = HashingFile(work / "examples.jsonl")
        paired: dict[str, tuple[HashingFile, HashingFile, Any, Any]] = {}
        for record in self._sets():
            line = json.dumps(record, ensure_ascii=False)
            sets_file.write(line + "\n")
            for example in _flatten(record):
                examples_file.write(json.dumps(example, ensure_ascii=False) + "\n")
            if self.paired:
                self._write_pairs(work, paired, record)
        digests = {"sets.jsonl": sets_file.close(), "examples.jsonl": examples_file.close()}
        for split, (orig, contrast, _, _) in paired.items():
            digests[f"paired/{split}_original.tsv"] = orig.close()
            digests[f"paired/{split}_contrast.tsv"] = contrast.close()
        self.release.counts = self._counts_summary()
        self.release.statistics = self._statistics()
        card = HashingFile(work / "README.md")
        card.write(dataset_card(self.project, self.release))
        digests["README.md"] = card.close()
        manifest = json.dumps({"files": digests, "algorithm": "sha256"}, indent=2, sort_keys=True)
        (work / "manifest.json").write_text(manifest + "\n", encoding="utf-8")
        return digests

    def _write_pairs(self, work: Path, paired: dict, record: dict[str, Any]) -> None:
        split = record["split"]
        if split not in paired:
            orig = HashingFile(work / "paired" / f"{split}_original.tsv")
            contrast = HashingFile(work / "paired" / f"{split}_contrast.tsv")
            writers = (_tsv_writer(orig), _tsv_writer(contrast))
            for writer in writers:
                writer.writerow(["label", self.project.field_names[0]])
            paired[split] = (orig, contrast, *writers)
        _, _, orig_writer, contrast_writer = paired[split]
        name = self.project.field_names[0]
        for perturbation in record["perturbations"]:
            orig_writer.writerow([record["original"]["label"], record["original"]["fields"][name]])
            contrast_writer.writerow([perturbation["label"], perturbation["fields"][name]])

    def _sets(self) -> Iterator[dict[str, Any]]:
        by_pivot: dict[int, list[Chosen]] = defaultdict(list)
        for c in self.chosen:
            by_pivot[c.pivot_id].append(c)
        pivot_ids = list(by_pivot)
        authors = pseudonyms(
            self.project,
            "expert",
            set(
                Perturbation.objects.filter(
                    pk__in=[c.perturbation_id for c in self.chosen]
                ).values_list("author_id", flat=True)
            ),
        )
        # Plain rows, not model instances: a release may hold 100k sets.
        pivot_columns = ("id", "external_id", "fields", "label")
        columns = ("id", "fields", "rationale", "author_id", "edit_distance", "seconds_spent",
                   "guideline_version")  # fmt: skip
        through = Perturbation.tags.through
        for start in range(0, len(pivot_ids), CHUNK):
            chunk = pivot_ids[start : start + CHUNK]
            pivots = {
                row[0]: dict(zip(pivot_columns, row, strict=True))
                for row in Example.objects.filter(pk__in=chunk).values_list(*pivot_columns)
            }
            wanted = [c.perturbation_id for pid in chunk for c in by_pivot[pid]]
            perturbations = {
                row[0]: {**dict(zip(columns, row, strict=True)), "tags": []}
                for row in Perturbation.objects.filter(pk__in=wanted).values_list(*columns)
            }
            for pid, tag in through.objects.filter(perturbation_id__in=wanted).values_list(
                "perturbation_id", "tag__name"
            ):
                perturbations[pid]["tags"].append(tag)
            for pivot_id in chunk:
                yield self._set_record(pivots[pivot_id], by_pivot[pivot_id], perturbations, authors)

    def _set_record(
        self,
        pivot: dict[str, Any],
        members: list[Chosen],
        perturbations: dict[int, dict[str, Any]],
        authors: dict[int, str],
    ) -> dict[str, Any]:
        split = members[0].split
        self.counts["sets"][split] += 1
        self.counts["original_labels"][split][pivot["label"]] += 1
        items = []
        for c in members:
            p = perturbations[c.perturbation_id]
            tags = sorted(p["tags"])
            total = sum(c.votes.values())
            self.counts["perturbations"][split] += 1
            self.counts["labels"][split][c.label] += 1
            for tag in tags:
                self.counts["tags"][split][tag] += 1
            self.seconds.append(p["seconds_spent"])
            self.guidelines[p["guideline_version"]] += 1
            self.authors.add(p["author_id"])
            items.append(
                {
                    "id": f"p-{p['id']}",
                    "fields": p["fields"],
                    "label": c.label,
                    "tags": tags,
                    "rationale": p["rationale"],
                    "author": authors[p["author_id"]],
                    "votes": c.votes,
                    "agreement": round(c.votes.get(c.label, 0) / total, 4) if total else None,
                    "edit_distance": round(p["edit_distance"], 4),
                    "seconds_spent": p["seconds_spent"],
                    "guideline_version": p["guideline_version"],
                }
            )
        original = {"id": pivot["external_id"], "fields": pivot["fields"], "label": pivot["label"]}
        return {
            "set_id": pivot["external_id"],
            "split": split,
            "original": original,
            "perturbations": items,
        }

    def _counts_summary(self) -> dict[str, Any]:
        c = self.counts
        return {
            "sets": dict(c["sets"]),
            "perturbations": dict(c["perturbations"]),
            "labels": {s: dict(v) for s, v in c["labels"].items()},
            "original_labels": {s: dict(v) for s, v in c["original_labels"].items()},
            "tags": {s: dict(v) for s, v in c["tags"].items()},
            "guideline_versions": {str(k): v for k, v in sorted(self.guidelines.items())},
            "experts": len(self.authors),
        }

    def _statistics(self) -> dict[str, Any]:
        project = self.project
        per_split: dict[str, Any] = {}
        for split in sorted({c.split for c in self.chosen}):
            members = [c for c in self.chosen if c.split == split and c.votes]
            counts = {c.perturbation_id: c.votes for c in members}
            majorities = {c.perturbation_id: c.label for c in members}
            per_split[split] = agreement_block(
                counts, majorities, project.all_labels, project.labels,
                project.setting("votes_per_item"),
            )  # fmt: skip
        vote_rows = Vote.objects.filter(
            item__perturbation_id__in=[c.perturbation_id for c in self.chosen]
        )
        validators = set(vote_rows.values_list("validator_id", flat=True).distinct())
        vote_seconds = list(vote_rows.values_list("seconds_spent", flat=True))
        return {
            "per_split": per_split,
            "validators": len(pseudonyms(project, "validator", validators)),
            "median_seconds_per_perturbation": _median(self.seconds),
            "total_hours_authoring": round(sum(self.seconds) / 3600, 2),
            "median_seconds_per_vote": _median(vote_seconds),
        }


def _median(values: list[int]) -> float | None:
    return float(statistics.median(values)) if values else None


def _tsv_writer(target: HashingFile) -> Any:
    return csv.writer(target, delimiter="\t", lineterminator="\n")  # type: ignore[arg-type]


def _flatten(record: dict[str, Any]) -> Iterator[dict[str, Any]]:
    original = record["original"]
    yield {
        "id": original["id"],
        "set_id": record["set_id"],
        "role": "original",
        "split": record["split"],
        **original["fields"],
        "label": original["label"],
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
            "label": p["label"],
            "tags": p["tags"],
            "votes": p["votes"],
        }


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def dataset_card(project: Project, release: Release) -> str:
    counts, stats, options = release.counts, release.statistics, release.options
    splits = sorted(counts["sets"])
    out = io.StringIO()
    w = out.write
    w(f"# {project.name}: contrast sets, release {release.version}\n\n")
    w(f"Created {timezone.localtime(release.created_at):%Y-%m-%d} with ContrastLab. ")
    w("Each contrast set is an original test example (the pivot) and expert edits of it that ")
    w("change its gold label. Every perturbation was validated blind by ")
    w(f"{project.setting('votes_per_item')} validators unless noted.\n\n")
    w("## Counts\n\n| split | sets | perturbations |\n|---|---|---|\n")
    for split in splits:
        w(f"| {split} | {counts['sets'][split]} | {counts['perturbations'][split]} |\n")
    w("\n### Labels of perturbations\n\n| split | " + " | ".join(project.labels) + " |\n")
    w("|---|" + "---|" * len(project.labels) + "\n")
    for split in splits:
        row = [str(counts["labels"].get(split, {}).get(label, 0)) for label in project.labels]
        w(f"| {split} | " + " | ".join(row) + " |\n")
    tags = sorted({tag for per in counts["tags"].values() for tag in per})
    if tags:
        w("\n### Tags\n\n| tag | " + " | ".join(splits) + " |\n|---|" + "---|" * len(splits) + "\n")
        for tag in tags:
            row = [str(counts["tags"].get(split, {}).get(tag, 0)) for split in splits]
            w(f"| {tag} | " + " | ".join(row) + " |\n")
    w("\n## Agreement\n\n| split | items with all votes | Fleiss' kappa | Krippendorff's alpha "
      "(nominal) | estimated human macro F1 |\n|---|---|---|---|---|\n")  # fmt: skip
    for split, block in stats["per_split"].items():
        figures = [block["fleiss_kappa"], block["krippendorff_alpha"], block["human_f1"]["macro"]]
        w(f"| {split} | {block['items']} | " + " | ".join(map(_fmt, figures)) + " |\n")
    w("\n## Annotators and time\n\n")
    w(f"- Experts: {counts['experts']}; validators: {stats['validators']} (pseudonymous).\n")
    w(f"- Median seconds per perturbation: {_fmt(stats['median_seconds_per_perturbation'])}; ")
    w(f"total authoring hours: {stats['total_hours_authoring']}.\n")
    w(f"- Median seconds per vote: {_fmt(stats['median_seconds_per_vote'])}.\n")
    versions = ", ".join(f"v{k}: {v}" for k, v in counts["guideline_versions"].items())
    w(f"- Guideline versions in force (perturbations): {versions}.\n")
    w("\n## How the release was built\n\n")
    w(f"- Split strategy: {options['split_strategy']}")
    if options["split_strategy"] == "random":
        w(f" (seed {options['seed']}, set-level proportions {json.dumps(options['proportions'])})")
    w(". Contrast sets are never split across splits.\n")
    w(f"- Minimum votes for the label, per split: {json.dumps(options['min_agreement'])}.\n")
    w("- Only accepted (or adjudicated) perturbations are included; control items are not.\n")
    w("\n## Files and loading\n\n")
    w("- `sets.jsonl`: one contrast set per line.\n- `examples.jsonl`: one example per line ")
    w("(`role` is `original` or `perturbed`).\n")
    w("- `paired/{split}_original.tsv` and `paired/{split}_contrast.tsv`: aligned by row.\n")
    w("- `manifest.json`: SHA-256 of every file.\n\n```python\nfrom datasets import load_dataset\n")
    w('ds = load_dataset("json", data_files="examples.jsonl", split="train")\n```\n')
    return out.getvalue()


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def release_diff(old: Release, new: Release) -> dict[str, Any]:
    """Sets and perturbations added, removed or relabelled from `old` to `new`."""
    a = {e[0]: e[1:] for e in old.entries.values_list("perturbation_id", "set_id", "label")}
    b = {e[0]: e[1:] for e in new.entries.values_list("perturbation_id", "set_id", "label")}
    sets_a, sets_b = {v[0] for v in a.values()}, {v[0] for v in b.values()}
    relabelled = sorted(p for p in set(a) & set(b) if a[p][1] != b[p][1])
    return {
        "from": old.version,
        "to": new.version,
        "sets_added": sorted(sets_b - sets_a),
        "sets_removed": sorted(sets_a - sets_b),
        "perturbations_added": sorted(f"p-{p}" for p in set(b) - set(a)),
        "perturbations_removed": sorted(f"p-{p}" for p in set(a) - set(b)),
        "relabelled": [{"id": f"p-{p}", "from": a[p][1], "to": b[p][1]} for p in relabelled],
    }
