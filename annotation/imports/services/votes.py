"""Import of validation responses collected elsewhere (docs/formats.md).

Each line becomes a resolved item whose votes come from pseudonymous external validators, so
that the data gets the same majority labels and statistics as data validated here.
"""

from collections import Counter, defaultdict
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.bulk import analyze, immediate_constraints, insert_rows, present_values
from annotation.errors import DomainError, ImportRejected
from annotation.imports.accounts import inactive_users
from annotation.imports.readers import (
    LineError,
    decode,
    field_problem,
    id_problem,
    over_row_limit,
    read_jsonl,
)
from annotation.models import AuditLog, Project, ValidationItem, ValidatorStatus, Vote
from annotation.models.config import SPLITS
from annotation.validation.resolution import majority_of
from annotation.validation.services.quality import Deltas, votes_imported


def _parse_line(
    project: Project, line: int, record: Any, seen: dict[str, int]
) -> dict[str, Any] | LineError:
    """One item of the file, or its first problem on its line."""
    try:
        if not isinstance(record, dict):
            raise DomainError("each line must be a JSON object.")
        item_id = _item_id(record, seen)
        fields = _item_fields(project, record)
        workers = _workers(project, record.get("label_distribution"))
        split = record.get("split", "test")
        if split not in SPLITS:
            raise DomainError(f"unknown split {split!r}.")
    except DomainError as problem:
        return LineError(line, problem.message)
    seen[item_id] = line
    return {"id": item_id, "fields": fields, "workers": workers, "split": split}


def _item_id(record: dict[str, Any], seen: dict[str, int]) -> str:
    item_id = record.get("id")
    if not isinstance(item_id, str | int) or isinstance(item_id, bool) or str(item_id) == "":
        raise DomainError("missing id.")
    item_id = str(item_id)
    if problem := id_problem(item_id):
        raise DomainError(problem)
    if item_id in seen:
        raise DomainError(f"duplicate id {item_id!r} (first seen on line {seen[item_id]}).")
    return item_id


def _item_fields(project: Project, record: dict[str, Any]) -> dict[str, str]:
    fields = record.get("fields")
    if not isinstance(fields, dict) or not fields:
        raise DomainError("fields must be an object of field name to text.")
    for name in project.field_names:
        if problem := field_problem(project, fields, name, f"field {name!r}"):
            raise DomainError(problem)
    return {name: fields.get(name) or "" for name in project.field_names}


def _workers(project: Project, distribution: Any) -> dict[str, str]:
    """Worker id -> the label it answered, from {label: [worker ids]}."""
    if not isinstance(distribution, dict) or not distribution:
        raise DomainError("label_distribution must be an object of label to worker ids.")
    longest = 150 - len(_account_name(project, ""))  # a username's length
    workers: dict[str, str] = {}
    for label, ids in distribution.items():
        if label not in project.all_labels:
            raise DomainError(
                f"unknown label {label!r}; the project's labels are "
                f"{', '.join(project.all_labels)}."
            )
        if not isinstance(ids, list) or not all(isinstance(w, str) and w for w in ids):
            raise DomainError(f"label_distribution[{label!r}] must be a list of worker ids.")
        if too_long := [w for w in ids if len(w) > longest]:
            raise DomainError(
                f"worker id {too_long[0][:40]!r}… is longer than {longest} characters."
            )
        for worker in ids:
            if worker in workers:
                raise DomainError(f"worker {worker!r} answers twice.")
            workers[worker] = label
    if len(workers) < 2:
        raise DomainError("an item needs at least two responses.")
    return workers


def _account_name(project: Project, worker: str) -> str:
    return f"ext-{project.slug}-{worker}"


def import_votes(*, project: Project, user: Any, data: bytes, source_name: str) -> dict[str, int]:
    """Import every line or none: the items imported, and those already present."""
    if project.is_free_text:
        raise ImportRejected(
            [LineError(None, "vote import holds labels; free-text projects validate here only.")]
        )
    text = decode(data)
    rows: list[dict[str, Any]] = []
    errors: list[LineError] = []
    seen: dict[str, int] = {}
    for line_no, record in read_jsonl(text):
        if too_many := over_row_limit(line_no, len(rows) + len(errors) + 1):
            errors.append(too_many)
            break
        parsed = (
            record if isinstance(record, LineError) else _parse_line(project, line_no, record, seen)
        )
        if isinstance(parsed, LineError):
            errors.append(parsed)
        else:
            rows.append(parsed)
    if not rows and not errors:
        errors.append(LineError(None, "the file holds no items."))
    # An item imported before, with the same fields and votes, is already present: the same
    # file imported again adds nothing. With other fields or votes, it is an error.
    before = _imported(project, list(seen))
    fresh, present = [], 0
    for row in rows:
        if row["id"] not in before:
            fresh.append(row)
        elif before[row["id"]] == (row["fields"], row["split"], row["workers"]):
            present += 1
        else:
            errors.append(
                LineError(
                    seen[row["id"]],
                    f"id {row['id']!r} was imported before with other fields, split or votes.",
                )
            )
    if errors:
        raise ImportRejected(errors)
    if fresh:
        # Foreign keys checked as each batch is stored, beside the encoding of the next,
        # rather than all at commit (600k checks for 100k items: a third of the import's time).
        with transaction.atomic(), immediate_constraints():
            _save(project, fresh)
            AuditLog.record(
                actor=user,
                action="votes_imported",
                project=project,
                source=source_name,
                items=len(fresh),
                already_present=present,
            )
        analyze(ValidationItem, Vote, ValidatorStatus)
    return {"imported": len(fresh), "already_present": present}


def _imported(project: Project, ids: list[str]) -> dict[str, Any]:
    """Items of this project imported under these ids: (fields, split, {worker: label})."""
    prefix = _account_name(project, "")
    found: dict[str, Any] = {}
    ids = sorted(present_values(ValidationItem, "external_id", ids, project_id=project.pk))
    for start in range(0, len(ids), 5000):
        items = ValidationItem.objects.filter(
            project=project, external_id__in=ids[start : start + 5000]
        ).prefetch_related("votes__validator")
        for item in items:
            workers = {v.validator.username.removeprefix(prefix): v.label for v in item.votes.all()}
            found[item.external_id] = (item.fields, item.split, workers)
    return found


def _save(project: Project, rows: list[Any]) -> None:
    """Items, then their votes, as plain rows (COPY on PostgreSQL); the validators' agreement
    counts are tallied on the way and added in one ordered pass."""
    names = sorted({w for row in rows for w in row["workers"]})
    accounts = inactive_users([_account_name(project, name) for name in names])
    validators = {name: accounts[_account_name(project, name)] for name in names}
    majority = project.setting("majority")
    now = timezone.now()
    majorities = [majority_of(list(row["workers"].values()), majority) for row in rows]
    item_ids = insert_rows(
        ValidationItem,
        [
            {
                "project_id": project.pk,
                "external_id": row["id"],
                "fields": row["fields"],
                "split": row["split"],
                "status": ValidationItem.Status.RESOLVED,
                "counted_votes": len(row["workers"]),
                "label_votes": dict(Counter(row["workers"].values())),
                "majority_label": label,
                "created_at": now,
                "resolved_at": now,
            }
            for row, label in zip(rows, majorities, strict=True)
        ],
    )
    deltas: Deltas = defaultdict(lambda: [0, 0])
    votes = []
    for item_id, row, majority_label in zip(item_ids, rows, majorities, strict=True):
        for worker, label in row["workers"].items():
            validator = validators[worker]
            votes.append(
                {"item_id": item_id, "validator_id": validator, "label": label, "created_at": now}
            )
            deltas[validator][0] += 1
            deltas[validator][1] += label == majority_label
    insert_rows(Vote, votes, returning_ids=False)
    votes_imported(project=project, deltas=deltas)
