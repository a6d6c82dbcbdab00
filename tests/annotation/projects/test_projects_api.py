import pytest

from annotation.models import AuditLog, Membership, Project
from tests.factories import ExampleFactory, UserFactory, project_creator

pytestmark = pytest.mark.django_db

PERSPECTIVES = {
    "name": "Perspectives",
    "slug": "perspectives",
    "task_type": "classification",
    "fields": [
        {"name": "claim", "kind": "text", "editable": True},
        {"name": "perspective", "kind": "text", "editable": False},
    ],
    "labels": ["support", "undermine"],
    "extra_labels": ["invalid"],
    "tags": [{"name": "negation", "description": "negate the claim", "target": 100}],
    "guidelines": "# Guidelines\nBe minimal.",
    "settings": {"votes_per_item": 5, "majority": 3},
}


def test_create_project_as_in_the_spec_makes_creator_admin(client_for):
    creator = project_creator()
    response = client_for(creator).post("/api/projects/", PERSPECTIVES, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["fields"] == PERSPECTIVES["fields"]
    assert body["tags"] == [{"name": "negation", "description": "negate the claim", "target": 100}]
    assert body["guideline_version"] == 1
    assert body["settings"]["claim_ttl"] == 7200  # defaults fill the omitted settings
    assert body["roles"] == ["admin"]
    project = Project.objects.get(slug="perspectives")
    assert Membership.objects.filter(project=project, user=creator, role="admin").exists()
    assert AuditLog.objects.filter(project=project, action="project_created").exists()


def test_only_staff_and_granted_users_create_projects(client_for, people):
    """Creating a project makes one its admin, who may register models: not for everyone."""
    for user in (UserFactory(username="plain"), people["validator"], people["admin"]):
        response = client_for(user).post("/api/projects/", PERSPECTIVES, format="json")
        assert response.status_code == 403, user
        assert "can_create_projects" in response.json()["detail"]
    response = client_for(UserFactory(username="root", is_staff=True)).post(
        "/api/projects/", {**PERSPECTIVES, "fields": "not even a list"}, format="json"
    )
    assert response.status_code == 400  # staff pass the check; then the payload is validated
    assert not Project.objects.filter(slug="perspectives").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"labels": ["only"]}, "at least two labels"),
        ({"labels": ["a", "a"]}, "labels repeat: a"),
        ({"fields": [{"name": "id"}]}, "reserved"),
        ({"fields": [{"name": "t", "editable": False}]}, "at least one field must be editable"),
        ({"settings": {"majority": 2}}, "majority must be more than half"),
        ({"settings": {"votes": 5}}, "unknown settings: votes"),
        ({"settings": {"control_rate": 2}}, "control_rate must be a number from 0 to 1"),
        ({"settings": {"release_min_agreement": {"test": 6}}}, "release_min_agreement"),
        ({"tags": [{"name": "x"}, {"name": "x"}]}, "tag 'x' appears twice"),
    ],
)
def test_invalid_project_configuration_is_refused_with_a_reason(client_for, change, message):
    response = client_for(project_creator()).post(
        "/api/projects/", {**PERSPECTIVES, **change}, format="json"
    )
    assert response.status_code == 400
    assert message in str(response.json())
    assert not Project.objects.filter(slug="perspectives").exists()


def test_new_guidelines_text_makes_a_new_version(project, people, client_for):
    client = client_for(people["admin"])
    url = f"/api/projects/{project.slug}/"
    assert client.patch(url, {"guidelines": "v1"}, format="json").json()["guideline_version"] == 1
    assert client.patch(url, {"guidelines": "v1"}, format="json").json()["guideline_version"] == 1
    body = client.patch(url, {"guidelines": "v2"}, format="json").json()
    assert (body["guideline_version"], body["guidelines"]) == (2, "v2")


def test_fields_and_labels_are_locked_once_examples_exist(project, people, client_for):
    ExampleFactory(project=project)
    client = client_for(people["admin"])
    url = f"/api/projects/{project.slug}/"
    response = client.patch(url, {"labels": ["negative", "positive"]}, format="json")
    assert response.status_code == 400
    assert "only be added at the end" in response.json()["detail"]
    response = client.patch(url, {"labels": ["positive", "negative", "neutral"]}, format="json")
    assert response.status_code == 200
    response = client.patch(url, {"fields": [{"name": "body"}]}, format="json")
    assert response.status_code == 400


def test_members_endpoint_sets_exact_roles_and_logs_changes(project, people, client_for):
    client = client_for(people["admin"])
    url = f"/api/projects/{project.slug}/members/"
    UserFactory(username="newbie")
    response = client.post(url, {"username": "newbie", "roles": ["validator", "expert"]})
    assert response.json() == {"username": "newbie", "roles": ["expert", "validator"]}
    client.post(url, {"username": "newbie", "roles": ["validator"]}, format="json")
    listed = {m["username"]: m["roles"] for m in client.get(url).json()["results"]}
    assert listed["newbie"] == ["validator"]
    changes = AuditLog.objects.filter(project=project, action="roles_changed")
    assert [c.details["after"] for c in changes.order_by("id")] == [
        ["expert", "validator"],
        ["validator"],
    ]
    missing = client.post(url, {"username": "ghost", "roles": ["expert"]}, format="json")
    assert missing.status_code == 400 and "no user named 'ghost'" in missing.json()["detail"]


def test_admin_cannot_remove_own_admin_role(project, people, client_for):
    response = client_for(people["admin"]).post(
        f"/api/projects/{project.slug}/members/",
        {"username": "alice", "roles": []},
        format="json",
    )
    assert response.status_code == 400


def test_validators_read_the_qualification_questions_without_their_answers(
    project, people, client_for
):
    """Issue 58, item 5: GET /api/projects/{slug}/ answered a validator who had still to take
    the test with its questions' labels; admins alone read the key, in the detail and list."""
    questions = [
        {"fields": {"text": "A fine film."}, "label": "positive"},
        {"fields": {"text": "A dull film."}, "answers": ["tedious"]},
    ]
    project.settings = {**project.settings, "qualification_questions": questions}
    project.save()
    for role in ("validator", "expert"):
        client = client_for(people[role])
        detail = client.get(f"/api/projects/{project.slug}/").json()
        listed = client.get("/api/projects/").json()["results"][0]
        for body in (detail, listed):
            assert body["settings"]["qualification_questions"] == [
                {"fields": {"text": "A fine film."}},
                {"fields": {"text": "A dull film."}},
            ], role
            assert "tedious" not in str(body["settings"])
    admin = client_for(people["admin"]).get(f"/api/projects/{project.slug}/").json()
    assert admin["settings"]["qualification_questions"] == questions
