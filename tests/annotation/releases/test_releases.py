import csv
import hashlib
import io
import json
import statistics
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from annotation.errors import DomainError
from annotation.models import Perturbation, Release, ValidationItem, Vote
from annotation.releases.services import release_create
from annotation.text.cells import from_spreadsheet_cell
from annotation.validation.services.adjudication import perturbation_adjudicate
from annotation.validation.services.votes import vote_cast
from tests.factories import ExampleFactory, member, submitted_perturbation

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def bundle(release: Release) -> zipfile.ZipFile:
    from django.conf import settings

    return zipfile.ZipFile(Path(settings.MEDIA_ROOT) / release.bundle)


def read_tsv(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline=""), delimiter="\t"))


def import_sets(client, project, **files_and_fields):  # type: ignore[no-untyped-def]
    return client.post(
        f"/api/projects/{project.slug}/import/sets/", files_and_fields, format="multipart"
    )


def test_imdb_contrast_sets_round_trip_through_a_release(shared_data, project, people, client_for):
    project.labels = ["Positive", "Negative"]
    project.save()
    original = shared_data / "imdb-contrast" / "test_original.tsv"
    contrast = shared_data / "imdb-contrast" / "test_contrast.tsv"
    admin = client_for(people["admin"])
    response = import_sets(
        admin, project, format="paired_tsv",
        original=SimpleUploadedFile(original.name, original.read_bytes()),
        contrast=SimpleUploadedFile(contrast.name, contrast.read_bytes()),
        mapping=json.dumps({"text": "Text", "label": "Sentiment"}),
        accept="true", author="gardner2020", tags="negation",
    )  # fmt: skip
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["perturbations"], body["already_present"]) == (488, 0)
    # Gardner et al.'s edits are imported as published: larger edits are kept, with a warning.
    assert body["warnings"] and all(
        isinstance(w["line"], int) and "the limit is 50%" in w["message"] for w in body["warnings"]
    )
    response = admin.post(f"/api/projects/{project.slug}/releases/", {"version": "1.0"})
    assert response.status_code == 201, response.json()
    release = Release.objects.get(pk=response.json()["id"])

    zipped = bundle(release)
    for name, source in (
        ("paired/test_original.tsv", original),
        ("paired/test_contrast.tsv", contrast),
    ):
        written = read_tsv(zipped.read(name))
        theirs = read_tsv(source.read_bytes())
        # Cells a spreadsheet would run as formulas ("- I had planned…") carry an apostrophe
        # (OWASP's rule); read back, every row is the published one.
        escaped = [row[1] for row in written[1:] if row[1].startswith("'")]
        risky = [row[1] for row in theirs[1:] if row[1].startswith(("=", "+", "-", "@"))]
        assert escaped == ["'" + text for text in risky] and risky
        ours = [[from_spreadsheet_cell(cell) for cell in row] for row in written]
        assert ours == theirs  # the file's own header (Sentiment, Text), then label, text per row
        assert len(ours) == 489
    sets = [json.loads(line) for line in zipped.read("sets.jsonl").splitlines()]
    assert len(sets) == 488
    assert {s["perturbations"][0]["author"] for s in sets} == {"expert-1"}
    assert len(zipped.read("examples.jsonl").splitlines()) == 976
    manifest = json.loads(zipped.read("manifest.json"))
    assert set(manifest["files"]) == {
        "sets.jsonl", "examples.jsonl", "README.md",
        "paired/test_original.tsv", "paired/test_contrast.tsv",
        "data/examples/test.parquet", "data/sets/test.parquet",
        "lm_eval/prompt.json", "lm_eval/utils.py", "lm_eval/contrastlab_sentiment.yaml",
        "lm_eval/contrastlab_sentiment_test.yaml",
    }  # fmt: skip
    for name, digest in manifest["files"].items():
        assert hashlib.sha256(zipped.read(name)).hexdigest() == digest

    import datasets

    path = Path(release.bundle).parent / "examples.jsonl"
    from django.conf import settings

    extracted = Path(settings.MEDIA_ROOT) / path
    extracted.write_bytes(zipped.read("examples.jsonl"))
    loaded = datasets.load_dataset("json", data_files=str(extracted), split="train")
    assert loaded.num_rows == 976
    assert set(loaded["role"]) == {"original", "perturbed"}
    assert "gardner2020" not in zipped.read("sets.jsonl").decode()


@pytest.fixture
def validated(project, people):  # type: ignore[no-untyped-def]
    """Three perturbations voted 5-0, 4-1 and 3-2 for their intended label, plus a dispute."""
    project.settings = {**project.settings, "control_rate": 0}
    project.save()
    crowd = [member(project, f"v{i}", "validator") for i in range(6)]
    outcomes = []
    for n_agree in (5, 4, 3, 2):
        p = submitted_perturbation(project, people["expert"])
        for i, validator in enumerate(crowd[:5]):
            vote_cast(
                project=p.item.project,
                item_id=p.item.pk,
                validator=validator,
                label="negative" if i < n_agree else "positive",
            )
        outcomes.append(Perturbation.objects.get(pk=p.pk))
    return outcomes, crowd


def test_release_filters_by_minimum_agreement_per_split(project, people, validated):
    outcomes, _ = validated
    assert [p.status for p in outcomes] == ["accepted", "accepted", "accepted", "disputed"]
    release = release_create(project=project, user=people["admin"], version="1",
                             min_agreement={"test": 4})  # fmt: skip
    assert sorted(release.entries.values_list("perturbation_id", flat=True)) == [
        outcomes[0].pk, outcomes[1].pk,
    ]  # fmt: skip
    loose = release_create(project=project, user=people["admin"], version="2")
    assert loose.entries.count() == 3  # project default: 3 of 5
    # Each perturbation carries its counted votes per label, and the share that agrees.
    sets = [json.loads(line) for line in bundle(loose).read("sets.jsonl").splitlines()]
    released = {s["perturbations"][0]["id"]: s["perturbations"][0] for s in sets}
    assert [
        (released[f"p-{p.pk}"]["votes"], released[f"p-{p.pk}"]["agreement"]) for p in outcomes[:3]
    ] == [
        ({"negative": 5}, 1.0),
        ({"positive": 1, "negative": 4}, 0.8),
        ({"positive": 2, "negative": 3}, 0.6),
    ]
    assert loose.counts["perturbations"] == {"test": 3}
    # The time figures cover the released perturbations' votes, and no others.
    released = Vote.objects.filter(item__perturbation__in=outcomes[:3])
    Vote.objects.filter(pk__in=released.values("pk")[:7]).update(seconds_spent=40)
    timed = release_create(project=project, user=people["admin"], version="3")
    seconds = list(released.values_list("seconds_spent", flat=True))
    assert timed.statistics["median_seconds_per_vote"] == statistics.median(seconds)
    assert timed.statistics["validators"] == 5


@pytest.mark.parametrize("typed, test_votes, released", [("test=4", 4, 2), ("5", 5, 1), ("", 3, 3)])
def test_the_release_form_takes_min_agreement_as_settings_does(
    project, people, validated, typed, test_votes, released
):
    """The release form asked for JSON where Settings asks for test=4 dev=3."""
    from django.test import Client

    client = Client()
    client.force_login(people["admin"])
    answer = client.post(f"/p/{project.slug}/releases/", {
        "version": "1.0", "split_strategy": "pivot", "seed": 0, "min_agreement": typed,
    })  # fmt: skip
    assert answer.status_code == 302, answer.content.decode()[:3000]
    release = Release.objects.get(version="1.0")
    assert release.options["min_agreement"]["test"] == test_votes
    assert release.entries.count() == released
    refused = client.post(f"/p/{project.slug}/releases/", {
        "version": "2.0", "split_strategy": "pivot", "seed": 0, "min_agreement": '{"test": 4}',
    })  # fmt: skip
    assert "split=number pairs, e.g. test=4 dev=3" in refused.content.decode()


# The voters' counts are taken once the vote commits (transaction.on_commit).
@pytest.mark.django_db(transaction=True)
def test_votes_and_adjudication_after_publication_leave_the_release_unchanged(
    project, people, validated, media
):
    outcomes, crowd = validated
    release = release_create(project=project, user=people["admin"], version="1.0")
    path = Path(media) / release.bundle
    before = path.read_bytes()
    entries = list(release.entries.values_list("perturbation_id", "label", "split"))
    perturbation_adjudicate(perturbation=outcomes[3], admin=people["admin"], decision="accept")
    extra = submitted_perturbation(project, people["expert"])
    vote_cast(
        project=extra.item.project, item_id=extra.item.pk, validator=crowd[5], label="negative"
    )
    from annotation.validation.services.quality import validator_set_qualified

    validator_set_qualified(project=project, validator_id=crowd[0].pk, qualified=False, actor=None)
    # The released items keep their resolution; the unreleased dispute was adjudicated.
    assert ValidationItem.objects.get(perturbation=outcomes[0]).status == "resolved"
    assert path.read_bytes() == before
    assert list(release.entries.values_list("perturbation_id", "label", "split")) == entries
    with pytest.raises(DomainError, match="exists"):
        release_create(project=project, user=people["admin"], version="1.0")
    later = release_create(project=project, user=people["admin"], version="1.1")
    assert Path(media, later.bundle).read_bytes() != before


def test_a_bundle_left_without_its_release_is_kept_aside_not_overwritten(
    project, people, validated, media
):
    """A database reset (or an attempt that failed after writing) leaves 1.0.zip with no
    release: publishing 1.0 again works, and the old file stays beside it."""
    folder = Path(media) / "releases" / project.slug
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "1.0.zip").write_bytes(b"left from before")
    release = release_create(project=project, user=people["admin"], version="1.0")
    assert zipfile.is_zipfile(Path(media) / release.bundle)
    (orphan,) = folder.glob("1.0.zip.orphan-*")
    assert orphan.read_bytes() == b"left from before"


@pytest.mark.parametrize("seed", range(5))
def test_random_split_never_cuts_a_set(project, people, seed):
    pivots = [ExampleFactory(project=project, fields={"text": f"good film {n}"}) for n in range(30)]
    for pivot in pivots:
        for word in ("bad", "awful"):
            text = pivot.fields["text"].replace("good", word)
            p = submitted_perturbation(project, people["expert"], pivot=pivot, text=text)
            Perturbation.objects.filter(pk=p.pk).update(status="accepted")
    release = release_create(
        project=project, user=people["admin"], version=f"r{seed}", split_strategy="random",
        seed=seed, proportions={"dev": 0.3, "test": 0.7}, min_agreement={"dev": 0, "test": 0},
    )  # fmt: skip
    splits_per_set: dict[str, set[str]] = {}
    for set_id, split in release.entries.values_list("set_id", "split"):
        splits_per_set.setdefault(set_id, set()).add(split)
    assert all(len(s) == 1 for s in splits_per_set.values())
    assert release.counts["sets"] == {"dev": 9, "test": 21}
    again = release_create(
        project=project, user=people["admin"], version=f"again{seed}", split_strategy="random",
        seed=seed, proportions={"dev": 0.3, "test": 0.7}, min_agreement={"dev": 0, "test": 0},
    )  # fmt: skip
    assert set(again.entries.values_list("set_id", "split")) == set(
        release.entries.values_list("set_id", "split")
    )


def test_sets_read_a_few_pivots_at_a_time_are_the_sets_read_at_once(project, people, monkeypatch):
    """The bundle reads perturbations a range of pivots at a time; a range never cuts a set, and
    skips what the release leaves out (a rejected perturbation between released ones)."""
    from annotation.releases import services

    for n in range(7):
        pivot = ExampleFactory(project=project, fields={"text": f"good film {n}"})
        for k, word in enumerate(("bad", "awful", "poor")[: 1 + n % 3]):
            text = pivot.fields["text"].replace("good", word)
            tag = ("negation", "antonym")[k % 2]
            p = submitted_perturbation(project, people["expert"], pivot=pivot, text=text, tag=tag)
            status = "rejected" if (n, k) == (4, 1) else "accepted"
            Perturbation.objects.filter(pk=p.pk).update(status=status)
    whole = release_create(project=project, user=people["admin"], version="whole")
    monkeypatch.setattr(services, "CHUNK", 2)
    pieces = release_create(project=project, user=people["admin"], version="pieces")
    sets = [json.loads(line) for line in bundle(pieces).read("sets.jsonl").splitlines()]
    assert [len(s["perturbations"]) for s in sets] == [1, 2, 3, 1, 1, 3, 1]
    assert [p["fields"]["text"] for p in sets[4]["perturbations"]] == ["bad film 4"]
    assert [p["tags"] for p in sets[5]["perturbations"]] == [
        ["negation"],
        ["antonym"],
        ["negation"],
    ]
    assert bundle(pieces).read("sets.jsonl") == bundle(whole).read("sets.jsonl")
    assert bundle(pieces).read("examples.jsonl") == bundle(whole).read("examples.jsonl")
    # The entries, stored a chunk at a time beside the reading, are every released one.
    columns = ("perturbation_id", "set_id", "split", "label")
    stored = sorted(pieces.entries.values_list(*columns))
    assert stored == sorted(whole.entries.values_list(*columns)) and len(stored) == 12
    assert pieces.statistics == whole.statistics


def test_dataset_card_holds_the_counts_and_kappa(project, people, validated):
    release = release_create(project=project, user=people["admin"], version="1.0")
    card = bundle(release).read("README.md").decode()
    assert "| test | 3 | 3 | 3 | 0 |" in card  # sets, perturbations, label changed, kept
    assert "Every perturbation changes the gold label." in card
    assert "| test | 0 | 3 |" in card  # labels: positive 0, negative 3
    kappa = release.statistics["per_split"]["test"]["fleiss_kappa"]
    from statsmodels.stats.inter_rater import fleiss_kappa

    assert kappa == pytest.approx(fleiss_kappa([[0, 5, 0], [1, 4, 0], [2, 3, 0]]), abs=1e-4)
    assert f"| test | 3 | {kappa:.3f} |" in card
    assert "Experts: 1; validators: 5 (pseudonymous)" in card
    assert "erin" not in card and "v0" not in bundle(release).read("sets.jsonl").decode()


def test_release_diff_lists_added_removed_and_relabelled(project, people, validated, client_for):
    outcomes, _ = validated
    first = release_create(project=project, user=people["admin"], version="1")
    perturbation_adjudicate(perturbation=outcomes[3], admin=people["admin"], decision="accept")
    Perturbation.objects.filter(pk=outcomes[2].pk).update(status="rejected")
    second = release_create(project=project, user=people["admin"], version="2")
    response = client_for(people["admin"]).get(
        f"/api/releases/{second.pk}/diff/?against={first.pk}"
    )
    diff = response.json()
    assert list(diff) == ["from", "to", "sets_added", "sets_removed", "perturbations_added",
                          "perturbations_removed", "relabelled", "files_changed"]  # fmt: skip
    assert (diff["from"], diff["to"]) == ("1", "2")
    assert diff["perturbations_added"] == [f"p-{outcomes[3].pk}"]
    assert diff["perturbations_removed"] == [f"p-{outcomes[2].pk}"]
    assert diff["relabelled"] == []
    assert diff["sets_added"] == [outcomes[3].pivot.external_id]


def test_download_serves_the_zip_to_admins_only(project, people, validated, client_for):
    release = release_create(project=project, user=people["admin"], version="1.0")
    url = f"/api/releases/{release.pk}/download/?format=zip"
    response = client_for(people["admin"]).get(url)
    assert response.status_code == 200
    data = b"".join(response.streaming_content)
    assert hashlib.sha256(data).hexdigest() == release.sha256
    for role in ("expert", "validator", "outsider"):
        assert client_for(people[role]).get(url).status_code == 404
    assert client_for(None).get(url).status_code == 401


def test_create_release_command(project, people, validated, capsys):
    call_command("create_release", project.slug, "cli-1", "--min-agreement", "test=5")
    out = json.loads(capsys.readouterr().out)
    assert out["counts"]["perturbations"] == {"test": 1}


def test_the_card_renders_as_sanitised_html():
    from annotation.text.fields import markdown_html

    html = markdown_html('# <script>alert(1)</script>Film <img src=x onerror="alert(2)">\n\n'
                         "| split | sets |\n|---|---|\n| test | 3 |\n")  # fmt: skip
    assert "<script" not in html and "onerror" not in html
    assert "<h1>" in html and "<td>test</td>" in html


def test_the_diff_names_the_files_that_changed_such_as_an_exported_prompt(
    project, people, released
):
    """1.0 to 1.1 said "0 changes" though the exported prompt changed."""
    from annotation.releases.diff import release_diff

    project.settings["prompt"] = "Review: {text}\nSentiment:"
    project.save()
    changed = release_create(project=project, user=people["admin"], version="1.1")
    diff = release_diff(released, changed)
    assert diff["sets_added"] == diff["perturbations_added"] == diff["relabelled"] == []
    prompts = [f for f in diff["files_changed"] if f.startswith("lm_eval/")]
    assert prompts, diff["files_changed"]
    data = {"sets.jsonl", "examples.jsonl"}
    assert not data & set(diff["files_changed"]), diff["files_changed"]


def test_one_vote_per_item_releases_with_agreement_not_defined(project, people):
    """votes_per_item 1 was accepted, and then every release answered 500 (kappa raised)."""
    from tests.factories import vote_all

    project.settings.update(votes_per_item=1, majority=1, release_min_agreement=1)
    project.save()
    validator = member(project, "solo", "validator")
    p = submitted_perturbation(project, people["expert"])
    vote_all(p.item, [validator], ["negative"])
    assert Perturbation.objects.get(pk=p.pk).status == "accepted"
    release = release_create(project=project, user=people["admin"], version="1.0")
    assert release.entries.count() == 1
    assert release.statistics["per_split"]["test"]["fleiss_kappa"] is None


def test_the_card_says_no_time_was_recorded_rather_than_zero_seconds(project, people, released):
    """Imported (or untimed) edits carry 0 s: the card says no time was recorded, never a
    median of 0.000 s; with some timed edits, the median of those alone."""
    card = bundle(released).read("README.md").decode()
    assert "Median seconds per perturbation: no time recorded" in card
    assert "Median seconds per vote: no time recorded" in card and "0.000" not in card
    assert "Experts: 1 (accounts that wrote or imported them; an import is one)" in card
    timed = [7, 30, 41]
    for p, seconds in zip(Perturbation.objects.order_by("pk"), timed, strict=False):
        Perturbation.objects.filter(pk=p.pk).update(seconds_spent=seconds)
    again = release_create(project=project, user=people["admin"], version="2.0")
    assert again.statistics["median_seconds_per_perturbation"] == statistics.median(timed)
    card = bundle(again).read("README.md").decode()
    assert "(those with a time recorded): 30.000;" in card
