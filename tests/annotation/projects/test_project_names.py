"""Project names are unique, whatever their case (issue 59: the project list showed two "IMDb
contrast sets"), with a clear error on the New project and Settings pages, in the API and on the
published import, whose form has a Name; the migration renames existing duplicates first."""

import importlib
from pathlib import Path

import pytest
from django.apps import apps
from django.db import connection
from django.test import Client

from annotation.models import Project
from tests.annotation.imports import published_files
from tests.annotation.imports.test_published_again import uploads
from tests.annotation.projects.test_setup_pages import form_data
from tests.factories import ProjectFactory, project_creator

pytestmark = pytest.mark.django_db
TAKEN = "IMDb contrast sets"


def browser(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def test_the_api_refuses_a_name_taken_whatever_its_case(client_for):
    ProjectFactory(name=TAKEN)
    creator = project_creator()
    api = client_for(creator)
    body = {"name": "imdb CONTRAST sets", "slug": "mine", "fields": [{"name": "text"}],
            "labels": ["negative", "positive"]}  # fmt: skip
    refused = api.post("/api/projects/", body, format="json")
    assert refused.status_code == 400
    assert refused.json()["field"] == "name" and TAKEN in refused.json()["detail"]
    assert not Project.objects.filter(slug="mine").exists()
    made = api.post("/api/projects/", {**body, "name": "Mine"}, format="json")
    assert made.status_code == 201
    renamed = api.patch("/api/projects/mine/", {"name": TAKEN.upper()}, format="json")
    assert renamed.status_code == 400 and renamed.json()["field"] == "name"
    recased = api.patch("/api/projects/mine/", {"name": "MINE"}, format="json")
    assert recased.status_code == 200  # its own name in another case
    assert Project.objects.get(slug="mine").name == "MINE"


def test_the_new_project_page_says_the_name_is_taken_beside_the_name():
    ProjectFactory(name=TAKEN)
    page = browser(project_creator())
    values = {"task_type": "classification", "name": TAKEN.lower(),
              "fields": [{"name": "text", "kind": "text", "editable": True}],
              "labels": ["negative", "positive"], "extra_labels": [], "tags": []}  # fmt: skip
    shown = page.post("/projects/new/", form_data(values, slug="mine"))
    assert shown.status_code == 200 and not Project.objects.filter(slug="mine").exists()
    assert shown.context["form"].errors["name"] == [
        f"a project named {TAKEN!r} exists: project names are unique, whatever their case; "
        "choose another name."
    ]


def test_the_published_import_has_a_name_and_refuses_one_taken(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    page = browser(project_creator())
    form = page.get("/projects/new/published/").content.decode()
    assert 'name="name"' in form
    files, _ = published_files.BUILDERS["imdb"]()
    made = page.post(
        "/projects/new/published/",
        {"dataset": "imdb", "slug": "a", "name": "IMDb, mine", **uploads(files)},
    )
    assert made.status_code == 302 and Project.objects.get(slug="a").name == "IMDb, mine"
    default = page.post(
        "/projects/new/published/", {"dataset": "imdb", "slug": "b", **uploads(files)}
    )
    assert default.status_code == 302 and Project.objects.get(slug="b").name == TAKEN
    again = page.post(
        "/projects/new/published/", {"dataset": "imdb", "slug": "c", **uploads(files)}
    )
    assert again.status_code == 200 and not Project.objects.filter(slug="c").exists()
    assert "project names are unique" in " ".join(again.context["form"].errors["name"])


def test_the_published_import_api_takes_a_name(client_for, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    api = client_for(project_creator())
    files, _ = published_files.BUILDERS["imdb"]()
    made = api.post(
        "/api/import/published/",
        {"dataset": "imdb", "slug": "a", "name": "Reviews", **uploads(files)},
    )
    assert made.status_code == 201 and Project.objects.get(slug="a").name == "Reviews"
    again = api.post(
        "/api/import/published/",
        {"dataset": "imdb", "slug": "b", "name": "REVIEWS", **uploads(files)},
    )
    assert again.status_code == 400 and again.json()["field"] == "name"


def test_the_migration_renames_existing_duplicates_before_the_constraint():
    constraint = next(c for c in Project._meta.constraints if c.name == "project_name_unique_ci")
    with connection.schema_editor() as editor:  # the table as it was before the migration
        editor.remove_constraint(Project, constraint)
    names = [TAKEN, TAKEN, "imdb CONTRAST sets", f"{TAKEN} (2)", "Quoref", "x" * 200, "X" * 200]
    for name in names:
        ProjectFactory(name=name)
    folder = Path(importlib.import_module("annotation.migrations").__file__).parent
    (module,) = folder.glob("*_project_names_unique.py")
    migration = importlib.import_module(f"annotation.migrations.{module.stem}")
    migration.unique_names(apps, None)
    assert list(Project.objects.order_by("id").values_list("name", flat=True)) == [
        TAKEN, f"{TAKEN} (3)", "imdb CONTRAST sets (4)", f"{TAKEN} (2)", "Quoref", "x" * 200,
        "X" * 196 + " (2)",
    ]  # fmt: skip
    with connection.schema_editor() as editor:
        editor.add_constraint(Project, constraint)  # holds now
