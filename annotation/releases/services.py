"""Releases (docs/workflows.md): choosing the accepted perturbations, recording them, and publishing
the bundle once. A release never changes after that."""

import math
import random
from collections import defaultdict
from collections.abc import Generator
from concurrent.futures import Future
from contextlib import closing
from itertools import chain
from typing import Any

from django.db import connection, transaction
from django.db.models import IntegerField, QuerySet
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Coalesce

from annotation.bulk import (
    CHUNK,
    Beside,
    atomic_or_conflict,
    collector_paused,
    immediate_constraints,
    related_names_json,
    streamed_rows,
)
from annotation.comments.selectors import released_comments
from annotation.errors import DomainError
from annotation.models import (
    SET_OF_ONE,
    AuditLog,
    Example,
    Perturbation,
    Project,
    Release,
    ReleaseEntry,
    Vote,
    user_or_none,
)
from annotation.models.config import SPLITS
from annotation.releases import bundle, copied, records
from annotation.releases import sql as release_sql
from annotation.releases.card import dataset_card
from annotation.releases.members import SETS_AT_ONCE
from annotation.releases.statistics import figures, pseudonyms, release_statistics
from annotation.text.answers import AnswerRules, Response
from annotation.webhooks import events


def clean_options(project: Project, options: dict[str, Any]) -> dict[str, Any]:
    """A release's options (docs/workflows.md), checked, with the project's defaults."""
    strategy = options.get("split_strategy") or "pivot"
    if strategy not in ("pivot", "random"):
        raise DomainError("split_strategy must be pivot or random.")
    seed = options.get("seed") or 0
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise DomainError("seed must be an integer.")
    proportions = options.get("proportions") or {"test": 1.0}
    if strategy == "random":
        _check_proportions(proportions)
    include_comments = options.get("include_comments", False)
    if not isinstance(include_comments, bool):
        raise DomainError("include_comments must be true or false.")
    return {
        "include_comments": include_comments,
        "split_strategy": strategy,
        "seed": seed,
        "proportions": proportions if strategy == "random" else None,
        "min_agreement": _min_agreement(project, options.get("min_agreement") or {}),
    }


def _check_proportions(proportions: Any) -> None:
    if not isinstance(proportions, dict) or set(proportions) - set(SPLITS):
        raise DomainError(f"proportions must map splits ({', '.join(SPLITS)}) to shares.")
    values = list(proportions.values())
    if (
        any(not isinstance(v, int | float) or not math.isfinite(v) or v < 0 for v in values)
        or abs(sum(values) - 1) > 1e-6
    ):
        raise DomainError("proportions must be non-negative and add up to 1.")


def _min_agreement(project: Project, given: Any) -> dict[str, int]:
    """Each split's minimum of agreeing votes: as given, else the project's setting."""
    if not isinstance(given, dict) or set(given) - set(SPLITS):
        raise DomainError("min_agreement must map splits to a number of votes.")
    votes_per_item = project.setting("votes_per_item")
    min_agreement = {s: given.get(s, project.min_agreement_for(s)) for s in SPLITS}
    for split, value in min_agreement.items():
        whole = isinstance(value, int) and not isinstance(value, bool)
        if not whole or not 0 <= value <= votes_per_item:
            raise DomainError(f"min_agreement for {split} must be from 0 to {votes_per_item}.")
    return min_agreement


def _accepted_votes(project: Project) -> Any:
    """Counted votes on the project's accepted perturbations: one join, no list of ids."""
    return Vote.objects.filter(
        item__perturbation__project=project,
        item__perturbation__status=Perturbation.Status.ACCEPTED,
        counts=True,
    )


def choose(project: Project, options: dict[str, Any]) -> list[records.Chosen]:
    """The accepted perturbations a release holds, each with its set, split and label."""
    columns = (
        "id",
        "pivot_id",
        "pivot__external_id",
        "pivot__split",
        "label",
        "majority_label",
        "author_id",
    )
    accepted = Perturbation.objects.filter(project=project, status=Perturbation.Status.ACCEPTED)
    if project.is_free_text:
        accepted = accepted.exclude(pivot__answers=[])  # waiting for an answer: waiting_sets
        # Answers only where they exist: decoding them is a third of this for 100k label sets.
        extra: tuple[str, ...] = ("answers", "majority_answers")
        answer_votes = _answer_votes(project)
    else:
        # Each label's counted votes, as the item keeps them: no vote is read.
        per_label = {
            f"n{j}": Coalesce(Cast(KeyTextTransform(label, "item__label_votes"), IntegerField()), 0)
            for j, label in enumerate(project.all_labels)
        }
        accepted = accepted.annotate(**per_label)
        extra = tuple(per_label)
    # Streamed: a million rows would not stay in memory.
    json_columns = range(len(columns), len(columns) + 2) if project.is_free_text else ()
    rows = streamed_rows(
        accepted.order_by("pivot_id", "id").values_list(*columns, *extra), json_columns
    )
    split_of = _split_sets(accepted, options)
    free_text, labels = project.is_free_text, project.all_labels
    chosen = []
    # A million perturbations share a few counts: each distinct one is kept once, and a label's
    # empty answers are one list (read, never changed), so that memory grows less per row.
    shared: dict[tuple[int, ...], dict[str, int]] = {}
    no_answers: list[Any] = []
    for pid, pivot_id, set_id, pivot_split, label, majority, author_id, *more in rows:
        split = split_of.get(pivot_id, pivot_split)
        if free_text:
            authored, agreed = more
            release_label, answers_released = "", agreed or authored
            counted = answer_votes.get(pid, {})
        else:
            release_label, answers_released = majority or label, no_answers
            counted = shared.setdefault(
                tuple(more), {name: n for name, n in zip(labels, more, strict=True) if n}
            )
        # Sets imported as accepted have no votes; they pass on the admin's word.
        agreeing = counted.get(release_label or records.AGREE, 0)
        if counted and agreeing < options["min_agreement"][split]:
            continue
        chosen.append(
            records.Chosen(
                pid, pivot_id, author_id, set_id, split, release_label, counted, answers_released
            )
        )
    return chosen


DISAGREE = "disagree"


def sets_of_one(project: Project) -> list[dict[str, Any]]:
    """The originals imported as sets of their own (SET_OF_ONE) that have no perturbation
    yet, as the bundle writes them: in their own split, in pivot order."""
    live = Perturbation.objects.exclude(status=Perturbation.Status.WITHDRAWN)
    originals = (
        Example.objects.filter(project=project, **{f"metadata__{SET_OF_ONE}": True})
        .exclude(pk__in=live.filter(project=project).values("pivot_id"))
        .order_by("id")
    )
    columns = ("id", "external_id", "fields", "label", "answers", "split")
    return [dict(row) for row in originals.values(*columns)]


def waiting_sets(project: Project) -> list[str]:
    """The sets a release leaves out because their original waits for its answer (a published
    DROP set imported without DROP's test set), by id."""
    if not project.is_free_text:
        return []
    accepted = Perturbation.objects.filter(
        project=project, status=Perturbation.Status.ACCEPTED, pivot__answers=[]
    )
    ids = accepted.values_list("pivot__external_id", flat=True).distinct()
    return sorted(ids.order_by("pivot__external_id"))


def _answer_votes(project: Project) -> dict[int, dict[str, int]]:
    """Free-text projects: how many counted responses agree with each accepted perturbation's
    release answers (the validators' once disputed and accepted, else the author's)."""
    rules = AnswerRules.of(project)
    columns = (
        "item__perturbation_id",
        "answer",
        "label",
        "item__perturbation__answers",
        "item__perturbation__majority_answers",
    )
    counts: dict[int, dict[str, int]] = defaultdict(lambda: {records.AGREE: 0, DISAGREE: 0})
    for pid, answer, label, authored, agreed in _accepted_votes(project).values_list(*columns):
        agrees = rules.matches(Response(answer, label), agreed or authored, "")
        counts[pid][records.AGREE if agrees else DISAGREE] += 1
    return counts


def _split_sets(perturbations: QuerySet[Perturbation], options: dict[str, Any]) -> dict[int, str]:
    """Whole sets go to one split: the pivot's own (empty map), or seeded random shares of
    the perturbations' pivots."""
    if options["split_strategy"] == "pivot":
        return {}
    pivots = perturbations.order_by("pivot_id").values_list("pivot_id", flat=True).distinct()
    shuffled = list(pivots)
    random.Random(options["seed"]).shuffle(shuffled)
    out, start = {}, 0
    splits = [s for s in SPLITS if options["proportions"].get(s)]
    for n, split in enumerate(splits):
        share = options["proportions"][split]
        end = len(shuffled) if n == len(splits) - 1 else start + round(share * len(shuffled))
        out.update(dict.fromkeys(shuffled[start:end], split))
        start = end
    return out


PUBLISH_RACE = (
    "Perturbations this release chose were deleted, or the same version was published, while "
    "it was being published: nothing was published. Publish it again."
)


@collector_paused()
@atomic_or_conflict(PUBLISH_RACE)
def release_create(*, project: Project, user: Any, version: str, **options: Any) -> Release:
    version = str(version).strip()
    if not version or len(version) > 32 or "/" in version:
        raise DomainError("version must be 1-32 characters without '/'.")
    if Release.objects.filter(project=project, version=version).exists():
        raise DomainError(f"version {version} exists; releases never change, pick a new one.")
    cleaned = clean_options(project, options)
    alone = sets_of_one(project)
    if copied.applies(project):
        try:
            with transaction.atomic():  # a savepoint: a chunk that is not plain undoes it
                release, n = _create_from_columns(project, user, version, cleaned, alone)
        except copied.NotPlain:
            release, n = _create_from_rows(project, user, version, cleaned, alone)
        except copied.Gone:
            raise DomainError(PUBLISH_RACE, code="conflict") from None
    else:
        release, n = _create_from_rows(project, user, version, cleaned, alone)
    release.save(update_fields=["bundle", "sha256", "manifest", "counts", "statistics"])
    AuditLog.record(
        actor=user,
        action="release_created",
        project=project,
        release=release.pk,
        version=version,
        perturbations=n,
    )
    transaction.on_commit(lambda: events.release_published(release), robust=True)
    return release


def _create_from_rows(
    project: Project, user: Any, version: str, cleaned: dict[str, Any], alone: list[dict]
) -> tuple[Release, int]:
    """A release written from its rows, as the driver reads them."""
    chosen = choose(project, cleaned)
    if not chosen and not alone:
        raise DomainError("no accepted perturbation passes the release filters.")
    release = Release.objects.create(
        project=project, version=version, created_by=user_or_none(user), options=cleaned
    )
    authors = pseudonyms(project, "expert", {c.author_id for c in chosen})
    with bundle.BundleWriter(project, release) as writer:
        # Foreign keys checked as the entries are stored, beside the writing, not at commit.
        # Closed before anything else on an error: its thread must let go of the connection.
        with immediate_constraints(), closing(_released_rows(project, release, chosen)) as rows:
            sets = records.SetRecords(project, authors).of(rows)
            writer.write_data(records.chunks(project, sets, alone))
        release.counts = writer.counts.summary()
        if waiting := waiting_sets(project):
            release.counts["waiting_for_answer"] = waiting
        seconds = writer.counts.seconds, writer.counts.total_seconds
        release.statistics = release_statistics(project, release, chosen, *seconds)
        _comments(writer, release)
        writer.finish(dataset_card(project, release))
    return release, len(chosen)


def _create_from_columns(
    project: Project, user: Any, version: str, cleaned: dict[str, Any], alone: list[dict]
) -> tuple[Release, int]:
    """A release chosen, stored and read in SQL, its sets read as columns
    (annotation.releases.copied): no Python object per perturbation."""
    accepted = Perturbation.objects.filter(project=project, status=Perturbation.Status.ACCEPTED)
    split_of = _split_sets(accepted, cleaned)
    with connection.cursor() as cursor:
        n = release_sql.choose(cursor, project.pk, project.all_labels, cleaned, split_of)
        del split_of
        if not n and not alone:
            raise DomainError("no accepted perturbation passes the release filters.")
        release = Release.objects.create(
            project=project, version=version, created_by=user_or_none(user), options=cleaned
        )
        authors = pseudonyms(project, "expert", release_sql.authors(cursor))
        with bundle.BundleWriter(project, release) as writer:
            columns = copied.Columns(project, cursor, authors)
            # Entries stored chunk by chunk, beside the files' threads. A perturbation deleted
            # since it was chosen fails its foreign key, or its chunk's read: PUBLISH_RACE.
            with immediate_constraints():
                chunks = columns.chunks(SETS_AT_ONCE, release.pk)
                writer.write_data(chain(chunks, records.chunks(project, (), alone)))
            release.counts = writer.counts.summary()
            histogram = release_sql.vote_histogram(cursor)
            seconds = writer.counts.seconds, writer.counts.total_seconds
            release.statistics = figures(project, release, columns.per_split(), *seconds, histogram)
            _comments(writer, release)
            writer.finish(dataset_card(project, release))
    return release, n


def _comments(writer: bundle.BundleWriter, release: Release) -> None:
    """comments.jsonl, when the release was asked to include comments (off by default)."""
    if release.options.get("include_comments"):
        writer.add_lines(bundle.COMMENTS_FILE, released_comments(release))


def _released_rows(
    project: Project, release: Release, chosen: list[records.Chosen]
) -> Generator[records.Row, None, None]:
    """Each chosen perturbation with its pivot's row and its own (tags included), read
    CHUNK at a time by the range of their pivots: index range scans, where one query in pivot
    order sorted every set's text on disk. On PostgreSQL the database reads the next chunk and
    stores this one's release entries while the bundle writes this chunk, so memory holds
    two chunks."""
    pivot_columns = ("id", "external_id", "fields", "label", "answers")
    columns = (
        "id",
        "external_id",
        "fields",
        "rationale",
        "edit_distance",
        "seconds_spent",
        "guideline_version",
        "tag_names",
    )
    width = len(pivot_columns)
    named = (*pivot_columns, *columns)
    json_columns = [i for i, c in enumerate(named) if c in ("fields", "answers", "tag_names")]
    chunks = [chosen[i : i + CHUNK] for i in range(0, len(chosen), CHUNK)]
    rows = (
        Perturbation.objects.filter(project=project)
        .annotate(tag_names=related_names_json(Perturbation, "tags"))
        .order_by()
        .values_list(*(f"pivot__{c}" for c in pivot_columns), *columns)
    )
    with Beside() as db:

        def read(chunk: list[records.Chosen]) -> Future[list[Any]]:
            pivots = (chunk[0].pivot_id, chunk[-1].pivot_id)
            return db.read(rows.filter(pivot__id__range=pivots), json_columns)

        reading, storing = read(chunks[0]), None
        for n, chunk in enumerate(chunks):
            if storing is not None:  # its error first: the queries after it fail too
                db.result(storing)
            by_id = {row[width]: row for row in db.result(reading)}
            if n + 1 < len(chunks):
                reading = read(chunks[n + 1])
            entries = [
                {
                    "release_id": release.pk,
                    "perturbation_id": c.perturbation_id,
                    "set_id": c.set_id,
                    "split": c.split,
                    "label": c.label,
                    "answers": c.answers,
                }
                for c in chunk
            ]
            storing = db.store(ReleaseEntry, entries)
            for c in chunk:
                row = by_id.get(c.perturbation_id)
                if row is None:  # deleted since it was chosen
                    raise DomainError(PUBLISH_RACE, code="conflict")
                perturbation = dict(zip(columns, row[width:], strict=True))
                yield c, dict(zip(pivot_columns, row[:width], strict=True)), perturbation
        if storing is not None:
            db.result(storing)
