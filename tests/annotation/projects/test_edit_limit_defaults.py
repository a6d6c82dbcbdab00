"""The default edit limit depends on which fields are editable (issue 59): the limit is
measured over the editable fields alone, so a new free-text project whose passage is read-only
(Quoref's setup: only the question is edited) must accept Quoref's real question edits, which
Gardner et al.'s experts often rewrote whole; with an editable passage the limit stays 0.5."""

from types import SimpleNamespace

import pytest

from annotation.authoring.rules import edit_problems
from annotation.imports.published.datasets import DATASETS
from annotation.models import Project
from tests.annotation.projects.test_setup_pages import browser, form_data
from tests.factories import project_creator

pytestmark = pytest.mark.django_db
QUOREF = ["quoref_original_subset_20191206_merged.json",
          "quoref_test_perturbations_20191206_merged.json"]  # fmt: skip
READ_ONLY_PASSAGE = [
    {"name": "context", "kind": "text", "editable": False},
    {"name": "question", "kind": "text", "editable": True},
]


def quoref_edits(shared_data) -> list[tuple[object, dict[str, str], list[object]]]:  # type: ignore[no-untyped-def]
    """Every real Quoref perturbation: (its original, its fields, its answers)."""
    folder = shared_data / "gardner-contrast-sets"
    files = [(name, (folder / name).read_bytes()) for name in QUOREF]
    sets, _, errors = DATASETS["quoref"].reader(files)
    assert not errors
    return [
        (SimpleNamespace(fields=s.original.fields, label="", answers=s.original.answers),
         p["fields"], p["answers"])
        for s in sets
        for p in s.perturbations
    ]  # fmt: skip


def refused_for_size(project: Project, edits) -> int:  # type: ignore[no-untyped-def]
    """How many of the edits the authoring rules refuse for their size alone."""
    return sum(
        any(p.admin_may_allow for p in edit_problems(project, original, fields, "", answers))
        for original, fields, answers in edits
    )


def test_a_new_free_text_project_with_a_read_only_passage_accepts_quorefs_question_edits(
    shared_data,
):
    edits = quoref_edits(shared_data)
    assert len(edits) == 700  # the paper's Table 2 counts 700 examples
    page = browser(project_creator())
    values = {"task_type": "free_text", "name": "Quoref", "fields": READ_ONLY_PASSAGE,
              "labels": [], "extra_labels": ["unanswerable"],
              "tags": [{"name": "entity", "description": "who"}]}  # fmt: skip
    assert page.post("/projects/new/", form_data(values, slug="quoref")).status_code == 302
    project = Project.objects.get(slug="quoref")
    assert refused_for_size(project, edits) == 0  # all 700 accepted (271 refused at 0.5)
    assert project.setting("max_edit_ratio") == 1.0


def test_the_new_project_page_leaves_the_limit_to_the_fields_unless_one_is_typed():
    page = browser(project_creator())
    shown = page.get("/projects/new/?template=free_text").content.decode()
    assert 'name="setting_max_edit_ratio"' in shown
    assert 'name="setting_max_edit_ratio" value=' not in shown  # blank: from the fields
    values = {"task_type": "free_text", "name": "Mine", "fields": READ_ONLY_PASSAGE,
              "labels": [], "extra_labels": [], "tags": []}  # fmt: skip
    typed = form_data(values, slug="mine", setting_max_edit_ratio="0.3")
    assert page.post("/projects/new/", typed).status_code == 302
    assert Project.objects.get(slug="mine").setting("max_edit_ratio") == 0.3


@pytest.mark.parametrize(
    "task_type, passage_editable, limit",
    [("free_text", False, 1.0), ("free_text", True, 0.5), ("classification", False, 0.5)],
)
def test_the_apis_default_limit_follows_the_editable_fields(
    client_for, task_type, passage_editable, limit
):
    api = client_for(project_creator())
    fields = [{**READ_ONLY_PASSAGE[0], "editable": passage_editable}, READ_ONLY_PASSAGE[1]]
    labels = [] if task_type == "free_text" else ["no", "yes"]
    body = {"name": "P", "slug": "p", "task_type": task_type, "fields": fields,
            "labels": labels}  # fmt: skip
    made = api.post("/api/projects/", body, format="json")
    assert made.status_code == 201, made.json()
    assert Project.objects.get(slug="p").setting("max_edit_ratio") == limit
    stated = api.post("/api/projects/", {**body, "name": "Q", "slug": "q",
                      "settings": {"max_edit_ratio": 0.4}}, format="json")  # fmt: skip
    assert stated.status_code == 201
    assert Project.objects.get(slug="q").setting("max_edit_ratio") == 0.4
