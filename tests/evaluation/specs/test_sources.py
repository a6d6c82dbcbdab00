"""A registration that names a source no worker can find is told at once (issue 47): a
mistyped hub id was accepted and failed about 49 s into its first run."""

import pytest
from django.test import Client
from huggingface_hub import constants

from evaluation.models import ModelSpec
from tests.evaluation.conftest import build_tiny_classifier

pytestmark = pytest.mark.django_db
CLASSIFIER = "hf-sequence-classification"


def register(client, name, source, kind=CLASSIFIER):  # type: ignore[no-untyped-def]
    payload = {"project": "sentiment", "name": name, "kind": kind, "source": source}
    return client.post("/api/models/", payload, format="json")


def test_a_hub_id_neither_cached_nor_on_the_hub_is_refused_at_registration(
    project, people, client_for, hub_cache
):
    admin = client_for(people["admin"])
    hub_cache("org/sentiment-model")
    assert register(admin, "right", "org/sentiment-model").status_code == 201
    typo = register(admin, "typo", "org/sentimnet-model")
    assert typo.status_code == 400
    assert (
        "'org/sentimnet-model' is not in this machine's Hugging Face cache" in typo.json()["detail"]
    )
    assert "HF_HUB_OFFLINE" in typo.json()["detail"]
    assert set(ModelSpec.objects.values_list("name", flat=True)) == {"right"}


def test_where_the_hub_cannot_be_reached_an_uncached_id_is_refused_with_the_reason(
    project, people, client_for, hub_cache, monkeypatch
):
    """Nothing answers at the hub's address (as on a machine with no internet): the answer
    says so at once, instead of a worker failing later."""
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")  # nothing listens
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    typo = register(client_for(people["admin"]), "typo", "org/sentimnet-model")
    assert typo.status_code == 400
    assert "the hub did not answer within 5 s" in typo.json()["detail"]


def test_a_folder_of_models_dir_without_a_config_is_refused_at_registration(
    project, staff, client_for, settings, tmp_path
):
    settings.MODELS_DIR = tmp_path / "models"
    (tmp_path / "models" / "half-copied").mkdir(parents=True)
    (tmp_path / "models" / "half-copied" / "model.safetensors").write_bytes(b"")
    build_tiny_classifier(tmp_path / "models" / "tiny")
    root = client_for(staff)
    refused = register(root, "half", "half-copied")
    assert refused.status_code == 400 and "holds no config.json" in refused.json()["detail"]
    absent = register(root, "absent", str(tmp_path / "models" / "not-there"))
    assert absent.status_code == 400 and "holds no config.json" in absent.json()["detail"]
    assert register(root, "tiny", "tiny").status_code == 201


def test_the_models_page_says_why_a_source_is_refused(project, people, hub_cache):
    browser = Client()
    browser.force_login(people["admin"])
    form = {"name": "typo", "kind": CLASSIFIER, "source": "org/sentimnet-model",
            "max_length": 256, "batch_size": 32, "device": "auto", "precision": "fp32",
            "concurrency": 4, "timeout": 120, "few_shot": 0, "num_beams": 1,
            "max_new_tokens": 64, "stride": 128, "max_answer_tokens": 30}  # fmt: skip
    page = browser.post(f"/p/{project.slug}/models/", form).content.decode()
    assert "is not in this machine&#x27;s Hugging Face cache" in page
    assert not ModelSpec.objects.filter(name="typo").exists()
