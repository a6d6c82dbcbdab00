"""The world the schema-driven tests fuzz: real objects of every kind and a token per role."""

import pytest
from rest_framework.authtoken.models import Token

from tests.factories import ProjectFactory, TagFactory, UserFactory


@pytest.fixture
def world(transactional_db, settings, tmp_path):  # type: ignore[no-untyped-def]
    """A project with a release, an open item, a run, an analysis and an import job, and a
    token per role: the fuzz reaches each endpoint's checks with ids that exist."""
    from annotation.models import ImportJob, Perturbation, Release, Webhook
    from evaluation.models import Analysis, EvaluationRun, ModelSpec
    from tests.factories import member, released_contrast_sets, submitted_perturbation

    settings.MEDIA_ROOT = tmp_path / "media"
    project = ProjectFactory(slug="fuzzed")
    TagFactory(project=project, name="negation")
    TagFactory(project=project, name="intensity")
    other = ProjectFactory(slug="elsewhere")
    people = {
        "admin": member(project, "alice", "admin"),
        "expert": member(project, "erin", "expert"),
        "validator": member(project, "victor", "validator"),
        "outsider": member(other, "olga", "admin", "expert", "validator"),
        "staff": UserFactory(username="fuzzer", is_staff=True, is_superuser=True),
    }
    release = released_contrast_sets(project, people)
    open_item = submitted_perturbation(project, people["expert"]).item
    spec = ModelSpec.objects.create(project=project, name="m", kind="python", source="a.b:c")
    run = EvaluationRun.objects.create(release=release, model=spec, status="succeeded")
    analysis = Analysis.objects.create(project=project, kind="artifacts", params={})
    job = ImportJob.objects.create(project=project, kind="votes", status="failed")
    hook = Webhook.objects.create(
        project=project, url="https://example.org/", events=["run.failed"]
    )
    from annotation.comments.services import comment_posted

    first = Perturbation.objects.filter(project=project).first()
    comment = comment_posted(perturbation=first, author=people["admin"], body="a comment")  # type: ignore[arg-type]
    ids = {
        "evaluations": run.pk, "analyses": analysis.pk, "releases": release.pk,
        "imports": job.pk, "validation": open_item.pk, "webhooks": hook.pk,
        "perturbations": Perturbation.objects.filter(project=project).first().pk,  # type: ignore[union-attr]
        "comments": comment.pk,
        "adjudicate": Perturbation.objects.filter(project=project).first().pk,  # type: ignore[union-attr]
    }  # fmt: skip
    assert Release.objects.count() == 1
    tokens = {role: Token.objects.create(user=user).key for role, user in people.items()}
    return {"tokens": tokens, "ids": ids, "example": project.examples.first().external_id}


def real_ids(path: str, parameters: dict, world: dict) -> None:  # type: ignore[type-arg]
    """Path parameters that name real objects: the id of the object the path is about."""
    parts = path.strip("/").split("/")
    for name in parameters:
        if name == "slug":
            parameters[name] = "fuzzed"
        elif name == "username":
            parameters[name] = "victor"
        elif name == "external_id":
            parameters[name] = world["example"]
        else:  # pk or item: the collection just before it in the path
            collection = parts[parts.index("{" + name + "}") - 1]
            parameters[name] = world["ids"].get(collection, parameters[name])
