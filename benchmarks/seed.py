"""Seed a PostgreSQL database for the benchmarks: a validation project with N resolved
perturbations (5 votes each) plus open items, and an export project of accepted sets.

Each benchmark calls `bench_database()` first: it (re)creates the database `contrastlab_bench`
(or $BENCH_DB) on 127.0.0.1 and points Django at it.
"""

import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from common import ROOT

DB = os.environ.get("BENCH_DB", "contrastlab_bench")  # another name keeps runs apart
URL = f"postgres://postgres@127.0.0.1:5432/{DB}"
WORDS = [
    "the",
    "film",
    "was",
    "good",
    "bad",
    "great",
    "awful",
    "plot",
    "acting",
    "music",
    "long",
    "short",
    "fun",
    "dull",
]


def bench_database(fresh: bool = True) -> None:
    """Point Django at the benchmark database: new and empty if `fresh`, else reused (and
    created when missing)."""
    import psycopg2

    os.environ["DATABASE_URL"] = URL
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    os.environ.setdefault("SECRET_KEY", "benchmark-only")
    admin = psycopg2.connect("dbname=postgres user=postgres host=127.0.0.1")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DB])
        create = fresh or cursor.fetchone() is None
        if create:
            cursor.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
            cursor.execute(f"CREATE DATABASE {DB}")
    admin.close()
    if create:
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "-v0"],
            cwd=ROOT,
            check=True,
            env={**os.environ, "DATABASE_URL": URL},
        )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def joined_text(row: str, salt: int, parts: int) -> tuple[str, str]:
    """SQL for a text of `parts` pieces (from the temporary table `pieces` of 4,096), each
    picked by a hash of `row` (an integer column) and `salt`; and the joins it needs."""
    names = [f"t{salt + k}" for k in range(parts)]
    joins = " ".join(
        f"JOIN pieces {t} ON {t}.n = abs(hashint4({row} * 8 + {salt + k})::bigint) %% 4096"
        for k, t in enumerate(names)
    )
    return " || ' ' || ".join(f"{t}.piece" for t in names), joins


@contextmanager
def trigram_indexes_later(cursor: Any) -> Iterator[None]:
    """The text search's trigram indexes dropped while a bulk insert runs and built once at
    the end, not row by row (in the caller's transaction)."""
    started = time.monotonic()
    cursor.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE indexdef LIKE '%%gin_trgm_ops%%'"
    )
    trigrams = cursor.fetchall()
    for name, _ in trigrams:
        cursor.execute(f'DROP INDEX "{name}"')
    yield
    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the keys' checks, before the indexes
    for _, definition in trigrams:
        cursor.execute(definition)
    print(f"  trigram indexes rebuilt ({time.monotonic() - started:.0f} s)")


# The perturbations' columns both seeders write, in the order of their SELECTs.
PERTURBATION_INSERT = """INSERT INTO annotation_perturbation
              (project_id, pivot_id, author_id, external_id, fields, label, answers,
               majority_answers, rationale, status, guideline_version, seconds_spent,
               wall_seconds, edit_distance, tokens_changed, allow_large_edit, majority_label,
               created_at, updated_at, submitted_at)"""


def run_seeding(
    pieces: list[str], statements: dict[str, str], params: dict, started: float
) -> None:
    """Run the seeding `statements` in turn, over the temporary table `pieces` of texts they
    join, the trigram indexes rebuilt once at the end."""
    from django.db import connection

    with connection.cursor() as cursor, trigram_indexes_later(cursor):
        cursor.execute(
            "CREATE TEMPORARY TABLE pieces ON COMMIT DROP AS SELECT n - 1 AS n, piece "
            "FROM unnest(%s::text[]) WITH ORDINALITY AS t(piece, n)",
            [pieces],
        )
        for name, sql in statements.items():
            cursor.execute(sql, params)
            print(f"  {name}: {cursor.rowcount} rows ({time.monotonic() - started:.0f} s)")


def seed_validation(resolved: int, open_items: int, validators: int = 40, clients: int = 32):
    """A project with `resolved` items holding 5 votes each from 5 distinct "hist" validators,
    and `open_items` with none, for `clients` validators to vote on. Written by INSERT ...
    SELECT over generate_series in one transaction, as seed_export is (the ORM's batches took
    minutes at 100k items): item g's texts, voters and labels come from hashes of g."""
    from django.db import transaction

    if resolved and validators < 5:
        raise ValueError("five distinct votes an item need at least five validators")
    with transaction.atomic():
        return _seed_validation(resolved, open_items, validators, clients)


def _seed_validation(resolved: int, open_items: int, validators: int, clients: int):  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import User

    from annotation.models import Membership, Project

    project = Project.objects.create(
        name="Bench",
        slug="bench",
        fields=[{"name": "text", "kind": "text", "editable": True}],
        labels=["positive", "negative"],
        extra_labels=["mixed"],
        settings={"control_rate": 0},
    )
    expert = User.objects.create(username="bench-expert")
    Membership.objects.create(project=project, user=expert, role="expert")
    voters = User.objects.bulk_create(User(username=f"hist{i}") for i in range(validators))
    bench_clients = User.objects.bulk_create(User(username=f"client{i}") for i in range(clients))
    Membership.objects.bulk_create(
        Membership(project=project, user=u, role="validator") for u in [*voters, *bench_clients]
    )
    rng = random.Random(0)
    pieces = [text(rng, 10) for _ in range(4096)]  # three to a text: 30 words, as before
    started = time.monotonic()

    def hashed(g: str, k: str, salt: int) -> str:  # a hash >= 0 of (item g, its vote k)
        return f"abs(hashint8({g}::bigint * 64 + {k} * 8 + {salt})::bigint)"

    # Vote k of item g: the voters are hist[a + d1 + ... + dk] (mod their number), with gaps
    # d of 1 to a quarter of it, so five distinct; about 85% of labels are "negative".
    label = f"""CASE WHEN {hashed("g", "k", 0)} %% 100 < 85 THEN 'negative'
                     WHEN {hashed("g", "k", 1)} %% 2 = 0 THEN 'positive' ELSE 'mixed' END"""
    gap = f"1 + {hashed('g', 'd', 2)} %% %(gap)s"
    gaps = f"SELECT coalesce(sum({gap}), 0) FROM generate_series(1, k) d"
    offset = f"{hashed('g', '0', 3)} + ({gaps})"
    voter = f"(%(voters)s::int[])[1 + ({offset}) %% cardinality(%(voters)s::int[])]"
    original, original_joins = joined_text("g", 0, 3)
    edited, edited_joins = joined_text("g", 3, 3)
    numbered = """(SELECT id, project_id, substr(external_id, 2)::int AS g,
                          substr(external_id, 2)::int < %(resolved)s AS resolved
                   FROM annotation_example WHERE project_id = %(project)s)"""
    params: dict[str, Any] = {
        "project": project.pk,
        "author": expert.pk,
        "voters": [v.pk for v in voters],
        "gap": max(1, (validators - 1) // 4),
        "resolved": resolved,
        "total": resolved + open_items,
    }
    statements = {
        "examples": f"""
            INSERT INTO annotation_example
              (project_id, external_id, fields, label, answers, split, metadata)
            SELECT %(project)s, 'e' || g, jsonb_build_object('text', {original}), 'positive',
                   '[]', 'test', '{{}}'
            FROM generate_series(0, %(total)s - 1) g {original_joins} ORDER BY g""",
        "perturbations": f"""
            {PERTURBATION_INSERT}
            SELECT e.project_id, e.id, %(author)s, '', jsonb_build_object('text', {edited}),
                   'negative', '[]', '[]', '',
                   CASE WHEN resolved THEN 'accepted' ELSE 'submitted' END,
                   0, 0, 0, 0, 0, false, '', now(), now(), now()
            FROM {numbered} e {edited_joins} ORDER BY g""",
        # Each item's counts are its votes' (below), as voting keeps them; majority "negative".
        "items": f"""
            INSERT INTO annotation_validationitem
              (project_id, perturbation_id, author_id, external_id, fields, split, gold_label,
               gold_answers, majority_answers, status, counted_votes, label_votes,
               extra_votes, majority_label, created_at, resolved_at)
            SELECT p.project_id, p.id, p.author_id, '', p.fields, 'test', 'negative', '[]',
                   '[]', CASE WHEN resolved THEN 'resolved' ELSE 'open' END,
                   CASE WHEN resolved THEN 5 ELSE 0 END,
                   CASE WHEN resolved THEN
                     (SELECT jsonb_object_agg(label, n) FROM
                       (SELECT {label} AS label, count(*) AS n FROM generate_series(0, 4) k
                        GROUP BY 1) ballot)
                   ELSE '{{}}' END,
                   0, CASE WHEN resolved THEN 'negative' ELSE '' END, now(),
                   CASE WHEN resolved THEN now() END
            FROM annotation_perturbation p JOIN {numbered} e ON e.id = p.pivot_id ORDER BY g""",
        "votes": f"""
            INSERT INTO annotation_vote
              (item_id, validator_id, label, answer, flags, seconds_spent, guideline_version,
               counts, created_at)
            SELECT i.id, {voter}, {label}, '', '[]', 3 + {hashed("g", "k", 4)} %% 38, 0, true,
                   now()
            FROM annotation_validationitem i
            JOIN annotation_perturbation p ON p.id = i.perturbation_id
            JOIN {numbered} e ON e.id = p.pivot_id, generate_series(0, 4) k
            WHERE resolved ORDER BY g, k""",
    }
    run_seeding(pieces, statements, params, started)
    return project, bench_clients


def export_slug(sets: int) -> str:
    return f"export-voted-{sets}"


def seed_export(sets: int):
    """A project with `sets` contrast sets, each with one accepted perturbation resolved by
    five counted votes (as validation leaves them: an item with its counts, and the votes).
    Written by INSERT ... SELECT over generate_series (a million sets in minutes, where the
    ORM took most of an hour): each text is four of 4,096 pieces of 30 random words, picked
    by a hash of its number, so that no two texts are alike."""
    from django.db import transaction

    with transaction.atomic():  # all or nothing: a later run reuses a project that exists
        return _seed_export(sets)


def _seed_export(sets: int):  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import User

    from annotation.models import Project, Tag

    rng = random.Random(1)
    project = Project.objects.create(
        name="Export",
        slug=export_slug(sets),
        fields=[{"name": "text", "kind": "text", "editable": True}],
        labels=["positive", "negative"],
        settings={"control_rate": 0},
    )
    tag = Tag.objects.create(project=project, name="negation", description="negate")
    author = User.objects.create(username=f"{project.slug}-expert")
    voters = User.objects.bulk_create(User(username=f"{project.slug}-v{i}") for i in range(40))
    pieces = [text(rng, 30) for _ in range(4096)]
    started = time.monotonic()

    original, original_joins = joined_text("g", 0, 4)
    edited, edited_joins = joined_text("e.g", 4, 4)
    params: dict[str, Any] = {
        "project": project.pk,
        "author": author.pk,
        "tag": tag.pk,
        "voters": [v.pk for v in voters],
        "sets": sets,
    }
    statements = {
        "originals": f"""
            INSERT INTO annotation_example
              (project_id, external_id, fields, label, answers, split, metadata)
            SELECT %(project)s, 'x' || g, jsonb_build_object('text', {original}), 'positive',
                   '[]', CASE WHEN g %% 5 = 0 THEN 'dev' ELSE 'test' END, '{{}}'
            FROM generate_series(0, %(sets)s - 1) g {original_joins}""",
        "perturbations": f"""
            {PERTURBATION_INSERT}
            SELECT e.project_id, e.id, %(author)s, '', jsonb_build_object('text', {edited}),
                   'negative', '[]', '[]', '', 'accepted', 0, 0, 0, 0.1, 0, false, '',
                   now(), now(), now()
            FROM (SELECT id, project_id, substr(external_id, 2)::int AS g
                  FROM annotation_example WHERE project_id = %(project)s) e {edited_joins}""",
        "tags": """
            INSERT INTO annotation_perturbation_tags (perturbation_id, tag_id)
            SELECT id, %(tag)s FROM annotation_perturbation WHERE project_id = %(project)s""",
        # Five votes an item: four for negative, the fifth for either label.
        "items": """
            INSERT INTO annotation_validationitem
              (id, project_id, perturbation_id, author_id, external_id, fields, split,
               gold_label, gold_answers, majority_answers, status, counted_votes, label_votes,
               extra_votes, majority_label, created_at, resolved_at)
            SELECT 4294967296 + p.id, p.project_id, p.id, p.author_id, '', p.fields, 'test',
                   'negative', '[]', '[]', 'resolved', 5,
                   CASE WHEN hashint8(p.id) %% 2 = 0 THEN '{"negative": 4, "positive": 1}'
                        ELSE '{"negative": 5}' END::jsonb,
                   0, 'negative', now(), now()
            FROM annotation_perturbation p WHERE p.project_id = %(project)s""",
        "votes": """
            INSERT INTO annotation_vote
              (item_id, validator_id, label, answer, flags, seconds_spent, guideline_version,
               counts, created_at)
            SELECT i.id, (%(voters)s::int[])[1 + (i.perturbation_id + k * 7) %% 40],
                   CASE WHEN k = 4 AND hashint8(i.perturbation_id) %% 2 = 0 THEN 'positive'
                        ELSE 'negative' END,
                   '', '[]', 3 + abs(hashint8(i.perturbation_id * 5 + k)::bigint) %% 38, 0,
                   true, now()
            FROM annotation_validationitem i, generate_series(0, 4) k
            WHERE i.project_id = %(project)s""",
    }
    run_seeding(pieces, statements, params, started)
    return project


def seed_through_api(base: str, resolved: int, open_items: int, clients: int = 32):  # type: ignore[no-untyped-def]
    """The same shape as seed_validation, as a user builds it: the project, its members, the
    resolved items as a vote import and the open pool as a set import, all through the API
    of a running server, and no ANALYZE but the imports' own. Accounts and tokens are made
    in the database (there is no sign-up API)."""
    import json

    import requests
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    rng = random.Random(0)
    root = User.objects.create(username="bench-root", is_staff=True, is_superuser=True)
    api = requests.Session()
    api.headers["Authorization"] = f"Token {Token.objects.create(user=root).key}"
    project: dict[str, Any] = {
        "name": "Bench", "slug": "bench", "task_type": "classification",
        "fields": [{"name": "text", "kind": "text", "editable": True}],
        "labels": ["positive", "negative"], "extra_labels": ["mixed"],
        "tags": [{"name": "negation", "description": "negate it"}],
        "settings": {"control_rate": 0, "max_edit_ratio": 1.0},
    }  # fmt: skip
    answer = api.post(f"{base}/api/projects/", json=project)
    assert answer.status_code == 201, answer.text
    bench_clients = [User.objects.create(username=f"client{i}") for i in range(clients)]
    for user in bench_clients:
        member = {"username": user.username, "roles": ["validator"]}
        assert api.post(f"{base}/api/projects/bench/members/", json=member).ok
    started = time.monotonic()
    workers = [f"hist{i}" for i in range(40)]
    lines = []
    for i in range(resolved):
        ballot: dict[str, list[str]] = {"positive": [], "negative": [], "mixed": []}
        for worker in rng.sample(workers, 5):
            label = "negative" if rng.random() < 0.85 else rng.choice(["positive", "mixed"])
            ballot[label].append(worker)
        lines.append(json.dumps({"id": f"r{i}", "fields": {"text": text(rng, 30)},
                                 "label_distribution": ballot}))  # fmt: skip
    votes = {"file": ("votes.jsonl", "\n".join(lines).encode())}
    answer = api.post(f"{base}/api/projects/bench/import/votes/", files=votes, timeout=600)
    assert answer.status_code == 201, answer.text[:500]
    print(f"  vote import: {resolved} items in {time.monotonic() - started:.1f} s", flush=True)
    started = time.monotonic()
    sets = [
        json.dumps({"set_id": f"e{i}", "split": "test",
                    "original": {"id": f"e{i}", "fields": {"text": text(rng, 30)},
                                 "label": "positive"},
                    "perturbations": [{"id": f"p{i}", "fields": {"text": text(rng, 30)},
                                       "label": "negative", "tags": ["negation"]}]})
        for i in range(open_items)
    ]  # fmt: skip
    files = {"file": ("sets.jsonl", "\n".join(sets).encode())}
    form = {"format": "sets_jsonl", "author": "bench"}
    answer = api.post(
        f"{base}/api/projects/bench/import/sets/", files=files, data=form, timeout=600
    )
    assert answer.status_code == 201, answer.text[:500]
    print(f"  set import: {open_items} open sets in {time.monotonic() - started:.1f} s", flush=True)
    from annotation.models import Project

    return Project.objects.get(slug="bench"), bench_clients
