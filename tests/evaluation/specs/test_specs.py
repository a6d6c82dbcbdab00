"""Registering models: who may make a worker load what, checked at registration and again on
the worker before loading (docs/security.md)."""

import tempfile
from pathlib import Path

import pytest

from evaluation.models import ModelSpec, Prediction
from evaluation.runs.execute import run_evaluation
from evaluation.runs.services import evaluation_enqueue
from tests.evaluation.conftest import build_tiny_classifier

pytestmark = pytest.mark.django_db
CLASSIFIER = "hf-sequence-classification"


def register(client, name, kind, source, project="sentiment"):  # type: ignore[no-untyped-def]
    payload = {"project": project, "name": name, "kind": kind, "source": source}
    return client.post("/api/models/", payload, format="json")


def run_now(released, model):  # type: ignore[no-untyped-def]
    run = evaluation_enqueue(release=released, model=model, split="test", user=None, send=False)
    return run_evaluation(run.pk)


def test_only_staff_make_workers_run_code_or_read_local_folders(
    project, people, staff, client_for, settings, tmp_path, hub_cache
):
    settings.MODELS_DIR = tmp_path / "models"
    build_tiny_classifier(tmp_path / "models" / "tiny")
    hub_cache("org/some-model")
    admin, root = client_for(people["admin"]), client_for(staff)

    classifier = CLASSIFIER
    for kind, source in (("python", "os:getcwd"), (classifier, "/etc"), (classifier, "./x")):
        refused = register(admin, "m", kind, source)
        assert refused.status_code == 403 and "Only staff" in refused.json()["detail"], source
    assert register(admin, "hub", classifier, "org/some-model").status_code == 201
    assert register(admin, "bad", classifier, "org/../../etc").status_code == 403
    outside = register(root, "etc", classifier, "/etc")
    assert outside.status_code == 400 and "not under MODELS_DIR" in outside.json()["detail"]
    inside = register(root, "local", classifier, str(tmp_path / "models" / "tiny"))
    assert inside.status_code == 201
    assert register(root, "py", "python", "tests.evaluation.rule_models:keyword").status_code == 201
    assert set(ModelSpec.objects.values_list("name", flat=True)) == {"hub", "local", "py"}


def test_a_hub_id_that_names_a_local_folder_is_never_loaded_for_a_non_staff_admin(
    project, people, released, client_for, tmp_path, monkeypatch, hub_cache
):
    """{"source": "localmodels/tiny"} was taken as a hub id, and from_pretrained loaded the
    folder of that name in the worker's working directory."""
    monkeypatch.chdir(tmp_path)
    build_tiny_classifier(tmp_path / "localmodels" / "tiny")
    for repo_id in ("localmodels/tiny", "localmodels/absent"):  # both known to the hub
        hub_cache(repo_id)
    admin = client_for(people["admin"])
    present = register(admin, "present", CLASSIFIER, "localmodels/tiny")
    absent = register(admin, "absent", CLASSIFIER, "localmodels/absent")
    # The answer is the same whether the folder exists: registration tells nothing of the disk.
    assert present.status_code == absent.status_code == 201
    assert present.json().keys() == absent.json().keys()
    run = run_now(released, ModelSpec.objects.get(name="present"))
    assert run.status == "failed"
    assert str(tmp_path) not in run.error and not Prediction.objects.filter(run=run).exists()
    # The same answer when no such folder exists (the hub refuses it): the disk stays unseen.
    other = run_now(released, ModelSpec.objects.get(name="absent"))
    assert other.status == "failed"

    def shape(run):  # type: ignore[no-untyped-def]
        return run.error.replace(repr(run.model.source), "SOURCE").replace(
            repr(run.model.name), "NAME"
        )

    assert shape(run) == shape(other)
    assert "could not be loaded from the hub as 'localmodels/tiny'" in run.error


def test_a_local_folder_must_resolve_inside_models_dir_at_registration_and_on_the_worker(
    project, people, released, staff, client_for, settings, tmp_path
):
    settings.MODELS_DIR = tmp_path / "models"
    outside = Path(tempfile.mkdtemp(prefix="outside-models-"))
    build_tiny_classifier(outside / "tiny")
    (tmp_path / "models").mkdir()
    link = tmp_path / "models" / "link"
    link.symlink_to(outside / "tiny")
    root = client_for(staff)
    refused = register(root, "link", CLASSIFIER, str(link))
    assert refused.status_code == 400 and "under MODELS_DIR" in refused.json()["detail"]
    # Registered while it was a real folder inside, then swapped for a link to the outside.
    build_tiny_classifier(tmp_path / "models" / "tiny")
    assert register(root, "tiny", CLASSIFIER, str(tmp_path / "models" / "tiny")).status_code == 201
    spec = ModelSpec.objects.get(name="tiny")
    assert run_now(released, spec).status == "succeeded"
    swapped = tmp_path / "models" / "tiny"
    swapped.rename(tmp_path / "models" / "old")
    swapped.symlink_to(outside / "tiny")
    run = run_now(released, spec)
    assert run.status == "failed" and "cannot be loaded from its source" in run.error


def test_staff_name_a_folder_of_models_dir_by_its_name_or_its_relative_path(
    project, people, staff, client_for, settings, tmp_path, monkeypatch, hub_cache
):
    """tiny-gpt2 (a folder inside MODELS_DIR) was kept as a hub id, and var/models/tiny-gpt2
    was refused: both name the folder, for staff; for anyone else a name stays a hub id."""
    monkeypatch.chdir(tmp_path)
    settings.MODELS_DIR = Path("var/models")
    build_tiny_classifier(tmp_path / "var" / "models" / "tiny")
    folder = str((tmp_path / "var" / "models" / "tiny").resolve())
    hub_cache("tiny")  # for anyone but staff, a hub id
    root, admin = client_for(staff), client_for(people["admin"])
    assert register(root, "by-name", CLASSIFIER, "tiny").json()["source"] == folder
    assert register(root, "by-path", CLASSIFIER, "var/models/tiny").json()["source"] == folder
    assert register(admin, "hub", CLASSIFIER, "tiny").json()["source"] == "tiny"
    refused = register(admin, "deep", CLASSIFIER, "var/models/tiny")
    assert refused.status_code == 403 and "Only staff" in refused.json()["detail"]
    elsewhere = register(root, "elsewhere", CLASSIFIER, "var/other/tiny")
    assert elsewhere.status_code == 400
    detail = elsewhere.json()["detail"]
    assert str((tmp_path / "var" / "models").resolve()) in detail and "tiny" in detail


def test_the_models_page_shows_models_dir_to_staff_only(project, people, staff, settings, tmp_path):
    from django.test import Client

    settings.MODELS_DIR = tmp_path / "models"
    build_tiny_classifier(tmp_path / "models" / "tiny")
    for user, shown in ((staff, True), (people["admin"], False)):
        client = Client()
        client.force_login(user)
        page = client.get(f"/p/{project.slug}/models/").content.decode()
        assert (str(tmp_path / "models") in page) is shown
        assert ("<code>tiny</code>" in page) is shown
        assert "predictions file" not in page and "Hf Causal Lm" not in page


def test_a_link_in_models_dir_to_a_folder_elsewhere_is_neither_listed_nor_taken_for_a_hub_id(
    project, staff, client_for, settings, tmp_path
):
    settings.MODELS_DIR = tmp_path / "models"
    build_tiny_classifier(tmp_path / "elsewhere" / "tiny")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "linked").symlink_to(tmp_path / "elsewhere" / "tiny")
    from evaluation.runs.sources import local_models

    assert local_models()["folders"] == []
    refused = register(client_for(staff), "m", CLASSIFIER, "linked", project=project.slug)
    assert refused.status_code == 400
    assert "a link to a folder outside it" in refused.json()["detail"]
    assert not ModelSpec.objects.filter(name="m").exists()
