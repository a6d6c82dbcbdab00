"""A schema-driven fuzz of the whole API (schemathesis) against the live test server, with every
role's token and real ids in the paths: no input gives a 5xx, errors are JSON, and documented
responses match the OpenAPI schema."""

import pytest
import schemathesis
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)

from tests.factories import ProjectFactory, TagFactory, UserFactory

schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
ROLES = ("staff", "admin", "expert", "validator", "outsider")


@pytest.fixture
def world(transactional_db, settings, tmp_path):  # type: ignore[no-untyped-def]
    """A project with a release, an open item, a run, an analysis and an import job, and a
    token per role: the fuzz reaches each endpoint's checks with ids that exist."""
    from annotation.models import ImportJob, Perturbation, Release
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
    ids = {
        "evaluations": run.pk, "analyses": analysis.pk, "releases": release.pk,
        "imports": job.pk, "validation": open_item.pk,
        "perturbations": Perturbation.objects.filter(project=project).first().pk,  # type: ignore[union-attr]
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


@schema.parametrize()
@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_input_gives_a_server_error(case, live_server, world):  # type: ignore[no-untyped-def]
    """Each generated request is sent with every role's token."""
    if case.path_parameters:
        real_ids(case.path, case.path_parameters, world)
    for role in ROLES:
        headers = {"Authorization": f"Token {world['tokens'][role]}"}
        response = case.call(base_url=live_server.url, headers=headers)
        case.validate_response(
            response,
            checks=[not_a_server_error, content_type_conformance, response_schema_conformance],
        )
        if response.status_code >= 400:  # headers: lowercase names, lists of values
            content_type = response.headers["content-type"][0]
            assert content_type.startswith("application/json"), (role, response.text)
