"""A schema-driven fuzz of the whole API (schemathesis) against the live test server, with every
role's token and real ids in the paths: no input gives a 5xx, errors are JSON, and documented
responses match the OpenAPI schema."""

import schemathesis
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)

from tests.security.conftest import real_ids

schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
ROLES = ("staff", "admin", "expert", "validator", "outsider")


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
