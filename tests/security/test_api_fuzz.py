"""A schema-driven fuzz of the whole API (schemathesis) against the live test server: no input
gives a 5xx, and documented responses match the OpenAPI schema."""

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
SLUG = "fuzzed"


@pytest.fixture
def token(transactional_db):  # type: ignore[no-untyped-def]
    """A staff user's token: the fuzz reaches every endpoint's validation, not only its 404."""
    project = ProjectFactory(slug=SLUG)
    TagFactory(project=project, name="negation")
    staff = UserFactory(username="fuzzer", is_staff=True, is_superuser=True)
    return Token.objects.create(user=staff).key


@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_input_gives_a_server_error(case, live_server, token):  # type: ignore[no-untyped-def]
    if case.path_parameters and "slug" in case.path_parameters:
        case.path_parameters["slug"] = SLUG  # a real project, so payloads are validated
    response = case.call(base_url=live_server.url, headers={"Authorization": f"Token {token}"})
    case.validate_response(
        response,
        checks=[not_a_server_error, content_type_conformance, response_schema_conformance],
    )
