import pytest
from django.db import IntegrityError, transaction

from annotation.models import Example, Guidelines, Membership, Project, Tag
from tests.factories import ExampleFactory, MembershipFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def violates(create) -> bool:  # type: ignore[no-untyped-def]
    try:
        with transaction.atomic():
            create()
    except IntegrityError:
        return True
    return False


def test_example_external_id_is_unique_per_project_only():
    first, second = ProjectFactory(), ProjectFactory()
    ExampleFactory(project=first, external_id="x")
    assert violates(lambda: ExampleFactory(project=first, external_id="x"))
    ExampleFactory(project=second, external_id="x")
    assert Example.objects.filter(external_id="x").count() == 2


@pytest.mark.parametrize(
    "bad",
    [{"split": "holdout"}, {"external_id": ""}],
    ids=["unknown split", "empty id"],
)
def test_example_rejects_invalid_values_in_the_database(bad):
    project = ProjectFactory()
    assert violates(lambda: ExampleFactory(project=project, **bad))


def test_membership_role_is_unique_and_valid():
    project, user = ProjectFactory(), UserFactory()
    MembershipFactory(project=project, user=user, role="expert")
    MembershipFactory(project=project, user=user, role="validator")
    assert violates(lambda: MembershipFactory(project=project, user=user, role="expert"))
    assert violates(lambda: MembershipFactory(project=project, user=user, role="owner"))
    assert Membership.objects.filter(user=user).count() == 2


def test_project_slug_unique_and_task_type_valid():
    ProjectFactory(slug="same")
    assert violates(lambda: ProjectFactory(slug="same"))
    assert violates(lambda: ProjectFactory(task_type="regression"))
    assert violates(lambda: ProjectFactory(slug=""))


def test_tag_names_unique_per_project_and_guideline_versions_unique():
    project = ProjectFactory()
    Tag.objects.create(project=project, name="negation")
    assert violates(lambda: Tag.objects.create(project=project, name="negation"))
    Guidelines.objects.create(project=project, version=1, text="a")
    assert violates(lambda: Guidelines.objects.create(project=project, version=1, text="b"))
    assert violates(lambda: Guidelines.objects.create(project=project, version=0, text="c"))


def test_project_settings_defaults_and_per_split_min_agreement():
    project = ProjectFactory(settings={"release_min_agreement": {"test": 4}})
    assert project.setting("votes_per_item") == 5
    assert project.setting("claim_ttl") == 7200
    assert project.min_agreement_for("test") == 4
    assert project.min_agreement_for("dev") == 3
    assert Project.objects.get(pk=project.pk).setting("require_label_change") is True
