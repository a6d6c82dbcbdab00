"""The release's lm-evaluation-harness task scores answers by the project's rules (issue 47): its
utils.py used to write SQuAD's normalisation and F1 > 0.8 into every free-text task, so ROPES
(articles kept, exact match), DROP (its metric, exact match) and Quoref (DROP's metric) got
other figures in lm-eval than in ContrastLab. Here the written task's own scoring (the bundle's
utils.py, over the bundle's docs) runs on the real files, imported through the published
importer, against a ContrastLab run of the same predictions."""

import importlib.util
import json
import zipfile
from pathlib import Path

import pytest
from django.conf import settings

from annotation.imports.published.services import import_published
from annotation.models import Example, Release
from annotation.releases.bundle import read_examples
from tests.annotation.imports.test_published_real import GARDNER, TABLE_2, files_of
from tests.evaluation.runs.test_published_runs import scored
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(db, settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"
    return UserFactory(username="root", is_staff=True, is_superuser=True)


def written_task(release: Release, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The bundle's lm_eval/utils.py, imported from the unzipped release as the harness does."""
    with zipfile.ZipFile(Path(settings.MEDIA_ROOT) / release.bundle) as bundle:
        bundle.extractall(tmp_path / "release")
    path = tmp_path / "release" / "lm_eval" / "utils.py"
    spec = importlib.util.spec_from_file_location(f"utils_{release.pk}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def guesses(answers: list) -> list:  # type: ignore[type-arg]
    """Predictions that tell the rules apart: the gold as written, with an article before it,
    a number written another way, part of it, its spans joined, and something else."""
    first = answers[0] if answers else "nothing"
    text = first if isinstance(first, str) else " | ".join(first)
    number = text.replace(",", "") if any(c.isdigit() for c in text) else f"{text} 2,000"
    words = text.split()
    return [text, f"the {text}", number, " ".join(words[: max(1, len(words) // 2)]),
            f"{text} and more words", "unrelated"]  # fmt: skip


@pytest.mark.parametrize("dataset", ["ropes", "drop", "quoref"])
def test_the_written_lm_eval_task_scores_as_contrastlab_on_the_real_files(
    dataset,
    root,
    client_for,
    tmp_path,
):
    project = import_published(
        dataset=dataset, files=files_of(GARDNER, TABLE_2[dataset][0]), user=root
    ).project
    # DROP's contrast file has no answers for its originals (DROP's test set holds them): an
    # expert would write each; here each takes its first perturbation's.
    for pivot in Example.objects.filter(project=project, answers=[]):
        pivot.answers = pivot.perturbations.order_by("pk").first().answers
        pivot.save(update_fields=["answers"])
    api = client_for(root)
    made = api.post(f"/api/projects/{dataset}/releases/", {"version": "1"}, format="json")
    assert made.status_code == 201, made.json()
    release = Release.objects.get(pk=made.json()["id"])
    examples = read_examples(release, "test")
    lines = [
        {"id": e["id"], "role": e["role"], "prediction": guesses(e["answers"])[n % 6]}
        for n, e in enumerate(examples)
    ]
    run = scored(api, release, lines)

    utils = written_task(release, tmp_path)
    docs = utils.load("test")["test"]
    predicted = {(line["id"], line["role"]): line["prediction"] for line in lines}
    harness = {}
    for doc in docs:
        answer = predicted[doc["id"], doc["role"]]
        harness[doc["id"], doc["role"]] = utils.process_answers(doc, [" " + answer])
    assert len(harness) == len(examples)  # one id per example: Quoref's repeats renamed
    product = {(p.example, p.role): p for p in run.predictions.all()}
    assert {k: (r["exact_match"], r["f1"]) for k, r in harness.items()} == {
        k: (p.em, pytest.approx(p.f1)) for k, p in product.items()
    }
    assert {k: r["consistency"][1] for k, r in harness.items()} == {
        k: p.correct for k, p in product.items()
    }
    consistency = utils.consistency([r["consistency"] for r in harness.values()])
    assert consistency == pytest.approx(run.metrics["consistency"])
    for role, name in (("original", "original"), ("perturbed", "perturbed")):
        ems = [r["exact_match"] for (_, r_role), r in harness.items() if r_role == role]
        f1s = [r["f1"] for (_, r_role), r in harness.items() if r_role == role]
        assert sum(ems) / len(ems) == pytest.approx(run.metrics[f"{name}_em"])
        assert sum(f1s) / len(f1s) == pytest.approx(run.metrics[f"{name}_f1"])
    # The figures differ between the rules, so the agreement above is not by chance.
    rules = json.loads((tmp_path / "release" / "lm_eval" / "answer_rules.json").read_text())
    assert rules == run.metrics["answer_rules"]
    assert 0 < run.metrics["consistency"] < 1
