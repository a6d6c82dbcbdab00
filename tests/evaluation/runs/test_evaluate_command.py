"""`manage.py evaluate --sync` on every task type prints the run's headline figures (it raised
KeyError after a free-text or minimal-pair run succeeded: it printed only label figures)."""

import io
import json

from django.core.management import call_command

from evaluation.models import EvaluationRun
from tests.evaluation.runs.test_minimal_pairs import minimal_pair_release  # noqa: F401

HEADLINES = {  # the figures each task type's runs report, as docs/metrics.md names them
    "classification": {"original_accuracy", "perturbed_accuracy", "consistency"},
    "free_text": {"original_em", "original_f1", "perturbed_em", "perturbed_f1", "consistency"},
    "minimal_pair": {"pair_accuracy"},
}


def evaluate(release: int, model: str) -> dict:  # type: ignore[type-arg]
    out = io.StringIO()
    call_command("evaluate", "--release", str(release), "--model", model, "--sync", stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def printed_as_stored(printed: dict, expected: set[str]) -> None:  # type: ignore[type-arg]
    run = EvaluationRun.objects.get(pk=printed["run"])
    assert printed["status"] == run.status == "succeeded"
    assert expected <= set(printed)
    assert {k: printed[k] for k in expected} == {k: run.metrics[k] for k in expected}


def register(root, project, name: str, **fields: object) -> None:  # type: ignore[no-untyped-def]
    made = root.post("/api/models/", {"project": project.slug, "name": name, **fields},
                     format="json")  # fmt: skip
    assert made.status_code == 201, made.json()


def test_a_label_release(sentiment):  # type: ignore[no-untyped-def]
    project, release, root = sentiment
    register(root, project, "kw", kind="python", source="tests.evaluation.rule_models:keyword")
    printed_as_stored(evaluate(release, "kw"), HEADLINES["classification"])


def test_a_free_text_release(questions):  # type: ignore[no-untyped-def]
    project, release, root = questions
    register(root, project, "echo", kind="python", source="tests.evaluation.rule_models:first_word")
    printed_as_stored(evaluate(release, "echo"), HEADLINES["free_text"])


def test_a_minimal_pair_release(minimal_pair_release, tiny_gpt2, settings):  # noqa: F811
    project, release, root, _ = minimal_pair_release
    settings.MODELS_DIR = tiny_gpt2.parent
    register(root, project, "lm", kind="hf-causal-lm", source=str(tiny_gpt2), max_new_tokens=5)
    printed_as_stored(evaluate(release, "lm"), HEADLINES["minimal_pair"])
