"""The rows' source of a release (services, where annotation.releases.copied does not apply):
its chosen perturbations with their rows grouped into the bundle's set records (dicts, as
sets.jsonl holds them), then into chunks of typed columns (annotation.releases.members) that
keep their records for the lines no column derives. And those lines, written dict by dict:
a chunk's sets and examples where its fields are not plain, and a free-text project's paired
answers."""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Any

import orjson

from annotation.models import Project, release_id
from annotation.releases.members import SETS_AT_ONCE, Members
from annotation.text.answers import AnswerRules

AGREE = "agree"  # free-text vote counts: responses that agree with the released answers
LINE = orjson.OPT_APPEND_NEWLINE


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


def chunks(
    project: Project, sets: Iterable[dict[str, Any]], alone: Iterable[dict[str, Any]] = ()
) -> Iterator[Members]:
    """Set records, then the originals released alone (`alone`: services.sets_of_one), as
    chunks of SETS_AT_ONCE sets."""
    records = chain(sets, (set_of_one(project, original) for original in alone))
    names, free_text = list(project.field_names), project.is_free_text
    while chunk := list(islice(records, SETS_AT_ONCE)):
        yield Members(chunk, names, free_text)


class SetRecords:
    """A release's rows in pivot order, as one record per set (`of`)."""

    def __init__(self, project: Project, authors: dict[int, str]):
        self.free_text = project.is_free_text
        self.answer_rules = AnswerRules.of(project)
        self.authors = authors

    def of(self, rows: Iterable[Row]) -> Iterator[dict[str, Any]]:
        pivot: dict[str, Any] | None = None
        members: list[Chosen] = []
        perturbations: dict[int, dict[str, Any]] = {}
        for chosen, pivot_row, perturbation in rows:
            if pivot is not None and pivot_row["id"] != pivot["id"]:
                yield self._record(pivot, members, perturbations)
                members, perturbations = [], {}
            pivot = pivot_row
            perturbations[perturbation["id"]] = perturbation
            members.append(chosen)
        if pivot is not None:
            yield self._record(pivot, members, perturbations)

    def _record(
        self, pivot: dict[str, Any], members: list[Chosen], perturbations: dict[int, dict]
    ) -> dict[str, Any]:
        key = "answers" if self.free_text else "label"
        items = []
        for c in members:
            p = perturbations[c.perturbation_id]
            total = sum(c.votes.values())
            if self.free_text:
                changed = not self.answer_rules.same(c.answers, pivot["answers"])
            else:
                changed = c.label != pivot["label"]
            items.append(
                {
                    "id": release_id(p["external_id"], p["id"]),
                    "fields": p["fields"],
                    key: c.answers if self.free_text else c.label,
                    f"{key}_changed": changed,
                    "tags": sorted(p["tag_names"]),
                    "rationale": p["rationale"],
                    "author": self.authors[c.author_id],
                    "votes": c.votes,
                    "agreement": round(c.votes.get(c.label or AGREE, 0) / total, 4)
                    if total
                    else None,
                    "edit_distance": round(p["edit_distance"], 4),
                    "seconds_spent": p["seconds_spent"],
                    "guideline_version": p["guideline_version"],
                }
            )
        return record(pivot, key, members[0].split, items)


def set_of_one(project: Project, original: dict[str, Any]) -> dict[str, Any]:
    """An original released as a set of its own (annotation.models.SET_OF_ONE)."""
    key = "answers" if project.is_free_text else "label"
    return record(original, key, original["split"], [])


def record(pivot: dict[str, Any], key: str, split: str, items: list[dict]) -> dict[str, Any]:
    original = {"id": pivot["external_id"], "fields": pivot["fields"], key: pivot[key]}
    return {
        "set_id": pivot["external_id"],
        "split": split,
        "original": original,
        "perturbations": items,
    }


# Lines written dict by dict ---------------------------------------------------------------------


def record_lines(records: list[dict[str, Any]]) -> tuple[bytes, bytes]:
    """The sets' and the examples' JSON lines of a chunk, from its records."""
    sets = b"".join(orjson.dumps(r, option=LINE) for r in records)
    examples = b"".join(orjson.dumps(e, option=LINE) for r in records for e in _flatten(r))
    return sets, examples


def qa_pair_lines(records: list[dict[str, Any]]) -> dict[str, tuple[bytes, bytes]]:
    """QA sets (docs/task-types.md): line i of {split}_original.jsonl pairs with line i of
    {split}_contrast.jsonl, as the TSVs do for single-text classification. Per split."""
    out: dict[str, tuple[list[bytes], list[bytes]]] = {}
    for r in records:
        orig, contrast = out.setdefault(r["split"], ([], []))
        original = r["original"]
        for p in r["perturbations"]:
            for target, member in ((orig, original), (contrast, p)):
                line = {"id": member["id"], **member["fields"], "answers": member["answers"]}
                target.append(orjson.dumps(line, option=LINE))
    return {split: (b"".join(o), b"".join(c)) for split, (o, c) in out.items()}


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
