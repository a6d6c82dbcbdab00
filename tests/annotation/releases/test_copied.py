"""A label project's release read by COPY into Arrow (annotation.releases.copied) against the
same release written from its rows: the same files, byte for byte, the same counts, figures
and entries; a chunk that is not plain goes the rows' way; a perturbation deleted while the
release is read publishes nothing."""

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from annotation.errors import DomainError
from annotation.models import (
    SET_OF_ONE,
    Example,
    Perturbation,
    Project,
    Release,
    ReleaseEntry,
    Tag,
    ValidationItem,
)
from annotation.releases import copied
from annotation.releases import sql as release_sql
from annotation.releases.services import release_create
from annotation.releases.statistics import SplitAgreement
from annotation.validation.stats import agreement_figures

pytestmark = pytest.mark.django_db

# Texts CSV, JSON and TSV each treat apart: quotes, a backslash, line breaks, a tab, a control
# character, what a reader takes for NULL, an empty text, a formula, non-ASCII.
TEXTS = [
    'say "no"',
    "back\\slash",
    "two\nlines\r\n",
    "a\ttab",
    "bell\x07",
    "NULL",
    "",
    "=1+1",
    "héllo \u2028 wörld",
    "plain",
]


@pytest.fixture(autouse=True)
def media(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"


def nli_project() -> Project:
    """Two fields whose jsonb order (shorter key first) is not the project's, tags whose sorted
    order is not their ids', counted votes of every shape, three splits, a set of one."""
    project = Project.objects.create(
        name="NLI",
        slug="nli",
        labels=["entailment", "contradiction"],
        extra_labels=["unsure"],
        fields=[
            {"name": "hypothesis", "kind": "text", "editable": True},
            {"name": "premise", "kind": "text", "editable": False},
        ],
    )
    tags = [Tag.objects.create(project=project, name=n) for n in ("zeta", "négation", "Alpha")]
    author, other = (User.objects.create(username=name) for name in ("a1", "a2"))
    votes = [
        {"contradiction": 4, "entailment": 1},
        {"contradiction": 2, "unsure": 3},
        None,
        {"entailment": 5},
        {"contradiction": 1},
    ]
    now = timezone.now()
    for n, text in enumerate(TEXTS):
        pivot = Example.objects.create(
            project=project,
            external_id=f"set-{n}",
            label="entailment",
            fields={"premise": f"premise {n}", "hypothesis": text},
            split=("train", "dev", "test")[n % 3],
        )
        for k in range(1 + (n % 4 == 0)):
            p = Perturbation.objects.create(
                project=project,
                pivot=pivot,
                author=(author, other)[k],
                status="accepted",
                fields={"premise": f"premise {n}", "hypothesis": f"{text} not {k}"},
                label="contradiction",
                external_id="pub-7" if n == 3 else "",
                majority_label="entailment" if n == 6 else "",
                rationale=f"why {text}",
                edit_distance=0.123456789 * (k + 1),
                seconds_spent=n * 7 % 5,
                guideline_version=1 + k,
                submitted_at=now,
            )
            p.tags.set(tags[: (n + k) % 4])
            counted = votes[(n + k) % len(votes)]
            if counted is not None:
                ValidationItem.objects.create(
                    project=project,
                    perturbation=p,
                    fields=p.fields,
                    label_votes=counted,
                    counted_votes=sum(counted.values()),
                    status="resolved",
                )
    Example.objects.create(
        project=project,
        external_id="alone",
        label="contradiction",
        split="test",
        fields={"premise": "p", "hypothesis": "h"},
        metadata={SET_OF_ONE: True},
    )
    return project


def published(project: Project, version: str, rows: bool, monkeypatch, **options) -> Release:  # type: ignore[no-untyped-def]
    with monkeypatch.context() as patch:
        if rows:
            patch.setattr(copied, "applies", lambda project: False)
        return release_create(project=project, user=None, version=version, **options)


def files(release: Release) -> dict[str, object]:
    """The bundle's files, Parquet as its rows, the release's version taken out."""
    from django.conf import settings

    out: dict[str, object] = {}
    with zipfile.ZipFile(Path(settings.MEDIA_ROOT) / release.bundle) as bundle:
        for name in bundle.namelist():
            data = bundle.read(name)
            if name.endswith(".parquet"):
                out[name] = pq.read_table(io.BytesIO(data)).to_pylist()
            elif name == "manifest.json":  # the digests of the files that hold no version
                digests = json.loads(data)["files"]
                out[name] = {k: v for k, v in digests.items() if k.endswith((".jsonl", ".tsv"))}
            elif name.endswith((".yaml", "README.md")):
                out[name] = data.replace(release.version.encode(), b"V")
            else:
                out[name] = data
    return out


def counted(release: Release) -> dict[str, object]:
    """What the card counts, counted here line by line over the bundle's sets.jsonl."""
    from django.conf import settings

    with zipfile.ZipFile(Path(settings.MEDIA_ROOT) / release.bundle) as bundle:
        sets = [json.loads(line) for line in bundle.read("sets.jsonl").splitlines()]
    out: dict[str, dict] = {k: {} for k in ("sets", "perturbations", "label_changed", "labels",
                                            "original_labels", "tags", "sets_of_one")}  # fmt: skip

    def add(key: str, split: str, value: object = None, n: int = 1) -> None:
        if value is None:
            out[key][split] = out[key].get(split, 0) + n
        else:
            inner = out[key].setdefault(split, {})
            inner[value] = inner.get(value, 0) + n

    versions: dict[str, int] = {}
    for s in sets:
        split = s["split"]
        add("sets", split)
        add("original_labels", split, s["original"]["label"])
        if not s["perturbations"]:
            add("sets_of_one", split)
        for p in s["perturbations"]:
            add("perturbations", split)
            add("label_changed", split, n=int(p["label_changed"]))
            add("labels", split, p["label"])
            for tag in p["tags"]:
                add("tags", split, tag)
            versions[str(p["guideline_version"])] = versions.get(str(p["guideline_version"]), 0) + 1
    authors = {p["author"] for s in sets for p in s["perturbations"]}
    return {**out, "guideline_versions": versions, "experts": len(authors)}


def entries(release: Release) -> list[tuple]:
    columns = ("perturbation_id", "set_id", "split", "label", "answers")
    return list(ReleaseEntry.objects.filter(release=release).order_by("id").values_list(*columns))


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"min_agreement": {"dev": 3, "test": 0, "train": 0}},
        {"split_strategy": "random", "seed": 5, "proportions": {"train": 0.5, "test": 0.5}},
    ],
)
def test_a_release_read_as_columns_is_the_release_written_from_rows(options, monkeypatch):
    project = nli_project()
    assert copied.applies(project)
    ours = published(project, "columns", False, monkeypatch, **options)
    theirs = published(project, "rows", True, monkeypatch, **options)
    assert files(ours) == files(theirs)
    assert (ours.counts, ours.statistics) == (theirs.counts, theirs.statistics)
    assert ours.counts == counted(ours)
    assert [e[1:] for e in entries(ours)] == [e[1:] for e in entries(theirs)]
    assert [e[0] for e in entries(ours)] == [e[0] for e in entries(theirs)]
    assert ours.counts["sets_of_one"] == {"test": 1} and ours.statistics["per_split"]


def test_fields_that_are_not_the_projects_texts_go_the_rows_way(monkeypatch):
    project = nli_project()
    odd = Perturbation.objects.filter(project=project).order_by("id")[3]
    odd.fields = {**odd.fields, "note": "an extra field"}
    odd.save()
    ours = published(project, "columns", False, monkeypatch)
    theirs = published(project, "rows", True, monkeypatch)
    assert files(ours) == files(theirs)
    assert b"an extra field" in files(ours)["sets.jsonl"]  # type: ignore[operator]


def test_a_perturbation_deleted_while_the_release_is_read_publishes_nothing(monkeypatch):
    project = nli_project()
    chosen = release_sql.authors

    def delete_one(cursor):  # type: ignore[no-untyped-def]
        # Another request deletes a chosen perturbation, after the choice, before the reads.
        cursor.execute(f"SELECT max(id) FROM {release_sql.CHOSEN}")
        Perturbation.objects.get(pk=cursor.fetchone()[0]).delete()
        return chosen(cursor)

    monkeypatch.setattr(release_sql, "authors", delete_one)
    with pytest.raises(DomainError) as refused:
        release_create(project=project, user=None, version="1.0")
    assert refused.value.code == "conflict"
    assert not Release.objects.filter(project=project).exists()


@pytest.mark.parametrize("seed", range(5))
def test_agreement_given_block_by_block_is_the_tables(seed):
    """Kappa, alpha and the human F1's seeded shuffle over blocks of a vote table: the figures
    agreement_figures gives for the whole table."""
    rng = np.random.default_rng(seed)
    project = Project(labels=["a", "b", "c"], extra_labels=["x"], settings={"votes_per_item": 5})
    n = 3000
    table = rng.multinomial(5, [0.6, 0.2, 0.15, 0.05], size=n).astype(np.int64)
    table[rng.random(n) < 0.1, 0] += 1  # some items with an extra vote
    gold = np.where(rng.random(n) < 0.9, table.argmax(axis=1), -1)
    width = int(table[(gold >= 0) & (gold < 3)].sum(axis=1).max())
    streamed = SplitAgreement(project, width)
    cuts = sorted(rng.choice(np.arange(1, n), size=7, replace=False).tolist())
    for block in np.split(np.arange(n), cuts):
        streamed.add(table[block], gold[block])
    whole = agreement_figures(table, gold, project.all_labels, project.labels, 5)
    assert streamed.block(project.labels) == whole


def test_the_copied_rows_are_read_in_jsonb_key_order():
    with connection.cursor() as cursor:
        cursor.execute("""SELECT '{"premise": 1, "hypothesis": 2, "id2": 3, "é": 4}'::jsonb""")
        (decoded,) = cursor.fetchone()
    assert tuple(
        json.loads(decoded) if isinstance(decoded, str) else decoded
    ) == copied.field_order(["premise", "hypothesis", "id2", "é"])
