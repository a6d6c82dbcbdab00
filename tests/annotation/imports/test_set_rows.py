"""A set import checks and stores in bulk (imports/set_rows.py: rows by COPY; text.edits keeps
the last texts' tokens and distances, so that each edit is measured once): every perturbation
must come out as the per-row way made it. Checked against that way, written out here, on the
real IMDb contrast sets (../shared/data), in orders that hit and miss the kept tokens."""

import csv
import json
import random
import re
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rapidfuzz.distance import Levenshtein

from annotation.authoring.rules import edit_problems
from annotation.imports.readers import text_problem
from annotation.models import Example, ImportBatch, Perturbation, ValidationItem
from annotation.text import edits

pytestmark = pytest.mark.django_db

TOKENS = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def per_row_distance(original: str, edited: str) -> float:
    """The edit distance as it was measured before any cache: both texts tokenized afresh."""
    a, b = TOKENS.findall(original), TOKENS.findall(edited)
    longest = max(len(a), len(b))
    return 0.0 if longest == 0 else Levenshtein.distance(a, b) / longest


def imdb_pairs(shared_data: Path) -> list[tuple[dict[str, str], dict[str, str]]]:
    pairs = []
    for split in ("dev", "test"):
        folder = shared_data / "imdb-contrast"
        rows = [
            list(csv.DictReader((folder / f"{split}_{kind}.tsv").open(), delimiter="\t"))
            for kind in ("original", "contrast")
        ]
        pairs += list(zip(*rows, strict=True))
    return pairs


def test_kept_tokens_give_every_real_edit_its_per_row_distance(shared_data):
    pairs = [(o["Text"], c["Text"]) for o, c in imdb_pairs(shared_data)]
    rng = random.Random(7)
    # Each pair twice in a row (the import's way: the second finds the tokens kept), then
    # again in a shuffled order, with texts swapped and pairs of two different reviews.
    order = [p for p in pairs for _ in (0, 1)] + rng.sample(pairs, len(pairs))
    order += [(b, a) for a, b in rng.sample(pairs, 200)]
    order += [(rng.choice(pairs)[0], rng.choice(pairs)[1]) for _ in range(200)]
    for original, edited in order:
        measured = edits.fields_edit_distance({"t": original}, {"t": edited}, ["t"])
        assert measured == per_row_distance(original, edited)
        assert edits.edit_distance(original, edited) == measured
        assert edits.tokenize(edited) == TOKENS.findall(edited)


def test_a_kept_token_list_cannot_be_changed_by_its_caller():
    tokens = edits.tokenize("A good film.")
    tokens.append("!")
    assert edits.tokenize("A good film.") == ["A", "good", "film", "."]


def test_an_empty_field_is_found_as_strip_found_it():
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    rng = random.Random(3)
    values = ["", "a", " a ", *spaces, "".join(spaces)]
    values += [
        "".join(rng.choice([*spaces, "x", "\x00", "é"]) for _ in range(5)) for _ in range(500)
    ]
    for value in values:
        expected = "missing" if not value.strip() else None
        problem = text_problem(value, "field 'text'")
        assert (problem == "field 'text' is empty.") == (expected == "missing"), repr(value)


def sets_jsonl(pairs: list[Any], labels: dict[str, str]) -> bytes:
    lines = []
    for n, (original, contrast) in enumerate(pairs):
        perturbation = {
            "fields": {"text": contrast["Text"]},
            "label": labels[contrast["Sentiment"]],
            "tags": ["negation"],
        }
        original_record = {
            "id": f"imdb-{n}",
            "fields": {"text": original["Text"]},
            "label": labels[original["Sentiment"]],
        }
        lines.append(json.dumps({"original": original_record, "perturbations": [perturbation]}))
    return "\n".join(lines).encode()


@pytest.mark.parametrize("accept", [True, False])
def test_real_sets_are_stored_and_warned_about_as_one_at_a_time(
    shared_data, project, people, client_for, settings, tmp_path, accept
):
    settings.MEDIA_ROOT = tmp_path / "media"
    pairs = imdb_pairs(shared_data)[:300]
    labels = {"Positive": "positive", "Negative": "negative"}
    data = sets_jsonl(pairs, labels)
    response = client_for(people["admin"]).post(
        f"/api/projects/{project.slug}/import/sets/",
        {
            "format": "sets_jsonl",
            "file": SimpleUploadedFile("imdb.jsonl", data),
            "author": "gardner2020",
            "accept": "true" if accept else "false",
        },
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["perturbations"] == len(pairs)
    project.refresh_from_db()
    stored = {
        p.pivot.external_id: p
        for p in Perturbation.objects.select_related("pivot").prefetch_related("tags")
    }
    assert len(stored) == len(pairs) == Example.objects.filter(project=project).count()
    expected_warnings = []
    edits._tokens.cache_clear()
    edits._last_distance = (None, None, 0)
    for n, (original, contrast) in enumerate(pairs):
        p = stored[f"imdb-{n}"]
        assert p.fields == {"text": contrast["Text"]}
        assert p.pivot.fields == {"text": original["Text"]}
        assert p.edit_distance == per_row_distance(original["Text"], contrast["Text"])
        assert p.status == ("accepted" if accept else "submitted")
        assert (p.resolved_at is not None) is accept and p.submitted_at is not None
        assert [t.name for t in p.tags.all()] == ["negation"]
        assert p.author.username == "pseudo-gardner2020" and p.batch_id == p.pivot.batch_id
        pivot = SimpleNamespace(fields=p.pivot.fields, label=p.pivot.label, answers=p.pivot.answers)
        problems = edit_problems(project, pivot, p.fields, p.label, [])
        expected_warnings += [(n + 1, problem.message) for problem in problems]
    batch = ImportBatch.objects.get(project=project)
    kept = [(w["line"], w["message"]) for w in batch.warnings]
    assert kept == expected_warnings
    items = ValidationItem.objects.filter(project=project, perturbation__isnull=False)
    assert items.count() == (0 if accept else len(pairs))


def test_a_tag_named_twice_is_stored_once(project, people, client_for, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    line = {
        "original": {"id": "o1", "fields": {"text": "A good film."}, "label": "positive"},
        "perturbations": [
            {"fields": {"text": "A bad film."}, "label": "negative", "tags": ["negation"] * 2}
        ],
    }
    response = client_for(people["admin"]).post(
        f"/api/projects/{project.slug}/import/sets/",
        {"format": "sets_jsonl", "file": SimpleUploadedFile("s.jsonl", json.dumps(line).encode())},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    assert [t.name for t in Perturbation.objects.get().tags.all()] == ["negation"]
