"""The project setup pages (New project, Settings) and the Django admin's project form: the
templates make working projects, and every rule the API enforces is refused here with the
API's own message; no input gives a 5xx."""

import json

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.models import AuditLog, Project, Tag
from annotation.projects.forms import TEMPLATES, ProjectForm
from tests.factories import ExampleFactory, project_creator

pytestmark = pytest.mark.django_db


def browser(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def form_data(values: dict, **override) -> dict:  # type: ignore[type-arg]
    """What the page posts for these project values: the form, the fields and tags rows."""
    data = {k: v for k, v in ProjectForm.initial_for(values).items() if v is not None}
    data = {k: v for k, v in data.items() if v is not False}  # an unticked box posts nothing
    fields, tags = values["fields"], values.get("tags", [])
    data |= {"field-TOTAL_FORMS": len(fields), "field-INITIAL_FORMS": 0,
             "tag-TOTAL_FORMS": len(tags), "tag-INITIAL_FORMS": 0}  # fmt: skip
    for n, field in enumerate(fields):
        data |= {f"field-{n}-name": field["name"], f"field-{n}-kind": field["kind"]}
        if field["editable"]:
            data[f"field-{n}-editable"] = "on"
    for n, tag in enumerate(tags):
        data |= {f"tag-{n}-name": tag["name"], f"tag-{n}-description": tag["description"],
                 f"tag-{n}-target": tag.get("target") or ""}  # fmt: skip
    return data | override


@pytest.mark.parametrize("task_type", list(TEMPLATES))
def test_each_template_creates_a_working_project(task_type):
    creator = project_creator()
    page = browser(creator)
    shown = page.get(f"/projects/new/?template={task_type}")
    assert shown.status_code == 200
    values = {"task_type": task_type, "name": f"My {task_type}", **TEMPLATES[task_type]}
    slug = f"my-{task_type}".replace("_", "-")
    answer = page.post("/projects/new/", form_data(values, slug=slug))
    assert answer.status_code == 302, answer.content.decode()[:2000]
    project = Project.objects.get(name=f"My {task_type}")
    assert answer["Location"] == f"/p/{project.slug}/import/"
    assert (project.task_type, project.fields, project.labels) == (
        task_type,
        TEMPLATES[task_type]["fields"],
        TEMPLATES[task_type]["labels"],
    )
    assert [t.name for t in project.tags.all()] == [t["name"] for t in TEMPLATES[task_type]["tags"]]
    assert project.current_guidelines().text == TEMPLATES[task_type]["guidelines"]
    assert "admin" in {m.role for m in project.memberships.filter(user=creator)}
    assert page.get(f"/p/{project.slug}/settings/").status_code == 200


def test_the_page_refuses_what_the_api_refuses_with_the_same_message(client_for):
    creator = project_creator()
    page, api = browser(creator), client_for(creator)
    base = {"task_type": "classification", "name": "P", **TEMPLATES["classification"]}
    cases = [
        ({"labels": ["only"]}, "labels must hold at least two labels."),
        ({"task_type": "free_text"}, "a free_text project has no labels"),
        ({"fields": [{"name": "label", "kind": "text", "editable": True}]}, "is reserved"),
        ({"fields": [{"name": "text", "kind": "text", "editable": False}]},
         "at least one field must be editable."),
        ({"settings": {"votes_per_item": 4, "majority": 2}}, "majority must be more than half"),
        ({"task_type": "minimal_pair"}, "labels are acceptable, unacceptable."),
    ]  # fmt: skip
    for n, (change, message) in enumerate(cases):
        values = {**base, **change}
        posted = page.post("/projects/new/", form_data(values, slug=f"p{n}"))
        assert posted.status_code == 200 and message in posted.content.decode(), message
        body = {**values, "slug": f"p{n}", "tags": values["tags"]}
        said = api.post("/api/projects/", body, format="json")
        assert said.status_code == 400 and message in json.dumps(said.json()), said.json()
    assert not Project.objects.exists()


def test_settings_keep_the_task_type_and_fields_once_examples_exist(project, people):
    ExampleFactory(project=project)
    page = browser(people["admin"])
    shown = page.get(f"/p/{project.slug}/settings/").content.decode()
    assert "fixed once examples are imported" in shown
    values = {"name": project.name, "task_type": project.task_type, "fields": project.fields,
              "labels": project.labels, "extra_labels": [], "settings": project.settings,
              "tags": [{"name": "negation", "description": ""}],
              "guidelines": "# New\n\nRead *this*."}  # fmt: skip
    grown = "\n".join([*project.labels, "mixed"])
    changed = form_data(values, task_type="free_text", labels=grown)
    assert page.post(f"/p/{project.slug}/settings/", changed).status_code == 302
    project.refresh_from_db()
    assert project.task_type == "classification"  # a disabled field keeps its value
    assert project.labels == [*values["labels"], "mixed"]
    assert [t.name for t in project.tags.all()] == ["negation"]
    assert project.current_guidelines().text == "# New\n\nRead *this*."
    renamed = form_data({**values, "fields": [{"name": "body", "kind": "text", "editable": True}]})
    refused = page.post(f"/p/{project.slug}/settings/", renamed)
    assert "fields cannot change once examples are imported." in refused.content.decode()
    project.refresh_from_db()
    assert project.fields[0]["name"] == "text"


def test_guidelines_preview_renders_markdown_escaped_and_saves_nothing(project, people):
    page = browser(people["admin"])
    values = {"name": project.name, "task_type": project.task_type, "fields": project.fields,
              "labels": project.labels, "extra_labels": [], "settings": project.settings,
              "tags": [],
              "guidelines": "# Title\n\n<script>alert(1)</script> **bold**"}  # fmt: skip
    shown = page.post(f"/p/{project.slug}/settings/", form_data(values, preview="1"))
    html = shown.content.decode()
    assert "<h1>Title</h1>" in html and "<strong>bold</strong>" in html
    assert "<script>alert(1)</script>" not in html
    assert project.current_guidelines() is None or "Title" not in project.current_guidelines().text


def test_only_creators_and_project_admins_reach_the_pages(project, people):
    for role in ("expert", "validator", "outsider"):
        page = browser(people[role])
        assert page.get("/projects/new/").status_code == 403
        assert page.post("/projects/new/", {"name": "x"}).status_code == 403
        assert page.get(f"/p/{project.slug}/settings/").status_code in (403, 404)
        assert page.post(f"/p/{project.slug}/settings/", {"name": "x"}).status_code in (403, 404)
    assert "New project" not in browser(people["expert"]).get("/").content.decode()
    assert "New project" in browser(project_creator()).get("/").content.decode()


texts = st.text(max_size=30)
junk = st.one_of(texts, st.integers(-(2**70), 2**70).map(str), st.just("\x00"), st.just("nan"))


FORM_KEYS = ["name", "slug", "task_type", "labels", "extra_labels", "guidelines",
             "setting_votes_per_item", "setting_majority", "setting_max_edit_ratio",
             "setting_release_min_agreement", "field-0-name", "field-0-kind",
             "field-TOTAL_FORMS", "tag-TOTAL_FORMS", "tag-0-name", "tag-0-target",
             "preview"]  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(st.sampled_from(FORM_KEYS), junk))
def test_fuzzed_setup_forms_never_give_a_5xx(data):
    creator = project_creator("fuzzy") if not _creator() else _creator()
    values = {"task_type": "classification", "name": "F", **TEMPLATES["classification"]}
    posted = form_data(values, slug="fuzzed") | data
    page = browser(creator)
    assert page.post("/projects/new/", posted).status_code < 500
    if Project.objects.filter(slug="fuzzed").exists():
        assert page.post("/p/fuzzed/settings/", posted).status_code < 500


def _creator():  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import User

    return User.objects.filter(username="fuzzy").first()


json_junk = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=3),
    max_leaves=8,
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(fields=json_junk, labels=json_junk, extra=json_junk, settings_=json_junk,
       task_type=st.sampled_from(["classification", "free_text", "minimal_pair", "x"]))  # fmt: skip
def test_fuzzed_admin_project_form_never_gives_a_5xx(fields, labels, extra, settings_, task_type):
    from django.contrib.auth.models import User

    root = User.objects.filter(username="root").first() or User.objects.create_superuser(
        "root", "root@example.org", "pw"
    )
    page = browser(root)
    data = {"name": "A", "slug": "admin-made", "task_type": task_type,
            "fields": json.dumps(fields), "labels": json.dumps(labels),
            "extra_labels": json.dumps(extra), "settings": json.dumps(settings_),
            "tags-TOTAL_FORMS": 0, "tags-INITIAL_FORMS": 0,
            "memberships-TOTAL_FORMS": 0, "memberships-INITIAL_FORMS": 0}  # fmt: skip
    answer = page.post("/admin/annotation/project/add/", data)
    assert answer.status_code < 500
    if Project.objects.filter(slug="admin-made").exists():  # saved: the slug's page must work
        made = Project.objects.get(slug="admin-made")
        assert page.get(f"/p/{made.slug}/settings/").status_code == 200
        made.delete()


def test_admin_creates_a_free_text_project_and_refuses_bad_fields_with_the_api_message(staff):
    page = browser(staff)
    base = {"name": "QA", "slug": "qa", "task_type": "free_text",
            "fields": json.dumps([{"name": "context"}, {"name": "question"}]),
            "labels": "[]", "extra_labels": '["unanswerable"]', "settings": "{}",
            "tags-TOTAL_FORMS": 0, "tags-INITIAL_FORMS": 0,
            "memberships-TOTAL_FORMS": 0, "memberships-INITIAL_FORMS": 0}  # fmt: skip
    bad = page.post("/admin/annotation/project/add/", {**base, "fields": '["text"]'})
    assert bad.status_code == 200
    assert "field 1 must be an object with a name." in bad.content.decode()
    good = page.post("/admin/annotation/project/add/", base)
    assert good.status_code == 302
    project = Project.objects.get(slug="qa")
    assert project.labels == [] and project.settings["votes_per_item"] == 5


def from_template(task_type: str, slug: str):  # type: ignore[no-untyped-def]
    """A project made on the New project page from its template, and its creator's browser."""
    creator = project_creator()
    page = browser(creator)
    values = {"task_type": task_type, "name": slug.title(), **TEMPLATES[task_type]}
    assert page.post("/projects/new/", form_data(values, slug=slug)).status_code == 302
    return creator, page


def preview(page, slug: str, content: bytes) -> str:  # type: ignore[no-untyped-def]
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = {"file": SimpleUploadedFile("rows.csv", content), "split": "test"}
    return page.post(f"/p/{slug}/import/", upload).content.decode()


def test_the_minimal_pair_template_takes_rows_without_a_source(client_for):
    """docs/task-types.md: a minimal pair's source is optional, in every import."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    creator, page = from_template("minimal_pair", "pairs")
    content = b"id,text,label\n1,The cat sleeps.,acceptable\n2,The cats sleeps.,unacceptable\n"
    shown = preview(page, "pairs", content)
    assert "Import 2 rows" in shown and "have a problem" not in shown
    assert "missing" not in shown
    api = client_for(creator)
    sourced = b"id,source,text,label\n3,Le chat dort.,The cat sleeps.,acceptable\n"
    for name, data in (("pairs.csv", content), ("more.csv", sourced)):
        answer = api.post("/api/projects/pairs/examples/import/",
                          {"file": SimpleUploadedFile(name, data)}, format="multipart")  # fmt: skip
        assert answer.status_code == 201, answer.json()
    project = Project.objects.get(slug="pairs")
    stored = dict(project.examples.values_list("external_id", "fields"))
    assert stored == {
        "1": {"text": "The cat sleeps.", "source": ""},
        "2": {"text": "The cats sleeps.", "source": ""},
        "3": {"text": "The cat sleeps.", "source": "Le chat dort."},
    }


def test_a_preview_where_every_row_is_bad_offers_no_import():
    _, page = from_template("classification", "c")
    shown = preview(page, "c", b"id,text,label\n1,Fine.,great\n2,Dull.,awful\n3,Good.,positive\n")
    assert "2 of 3 rows have a problem" in shown and "import the other 1" in shown
    shown = preview(page, "c", b"id,text,label\n1,Fine.,great\n2,Dull.,awful\n")
    assert "nothing can be imported" in shown
    assert 'class="primary" disabled>Import 2 rows' in shown


def test_the_project_list_names_task_types_as_people_do():
    _, page = from_template("free_text", "qa")
    listed = page.get("/").content.decode()
    assert "Free-text QA" in listed and "free_text" not in listed


def test_adding_one_tag_logs_that_tag_and_nothing_else(project, people):
    """The Settings page posts every setting; the audit log names only what changed: one tag
    added is `tags_changed` with that tag, not `project_updated` with every setting."""
    Tag.objects.filter(project=project, name="negation").update(example_edits=[{"a": "b"}])
    page = browser(people["admin"])
    tags = [{"name": t.name, "description": t.description} for t in project.tags.all()]
    values = {"name": project.name, "task_type": project.task_type, "fields": project.fields,
              "labels": project.labels, "extra_labels": project.extra_labels,
              "settings": project.settings, "tags": tags, "guidelines": ""}  # fmt: skip
    url = f"/p/{project.slug}/settings/"
    assert page.post(url, form_data(values)).status_code == 302  # nothing changed
    assert not AuditLog.objects.filter(project=project).exists()
    grown = {**values, "tags": [*tags, {"name": "tense", "description": "past for present"}]}
    assert page.post(url, form_data(grown)).status_code == 302
    entries = list(AuditLog.objects.filter(project=project).values_list("action", "details"))
    assert entries == [("tags_changed", {"added": ["tense"]})]
    assert Tag.objects.get(project=project, name="negation").example_edits == [{"a": "b"}]

    renamed = form_data(grown, name="Renamed", setting_lease_ttl=900)
    assert page.post(url, renamed).status_code == 302
    last = AuditLog.objects.filter(project=project).latest("pk")
    assert (last.action, last.details) == (
        "project_updated",
        {"name": {"from": project.name, "to": "Renamed"},
         "settings": {"lease_ttl": {"from": project.settings["lease_ttl"], "to": 900}}},
    )  # fmt: skip
