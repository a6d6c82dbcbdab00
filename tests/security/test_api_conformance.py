"""Every answer of the API is the one its OpenAPI schema promises, for a staff token and a
validator's: each status code is documented, each body matches its schema, for requests the
schema calls valid and those it calls invalid (schemathesis, a few examples of each kind per
operation, against the live test server)."""

import contextlib
import os
import re

import pytest
import schemathesis
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.openapi.checks import RejectedPositiveData
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.security.conftest import real_ids

schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
# What every answer must be: never a 5xx, a documented status code, a body of the documented
# content type and schema; and valid requests accepted, invalid ones refused.
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    positive_data_acceptance,  # a request the schema calls valid is not refused with 400
    negative_data_rejection,  # nor is one it calls invalid accepted
]
# Rules that no schema can state, as they depend on what exists or join fields: each is its
# operation's documented 400 (annotation.errors.STATE_RULES), and a schema-valid request that
# breaks one may be refused with 400 by exactly this answer (a pattern over its body).
REFUSALS = {
    "POST /auth/token/": r"Unable to log in with provided credentials",
    "DELETE /projects/{slug}/": r"Type the project's slug \(fuzzed\) to confirm",
    # A rule across the configuration's fields answers a detail and no one field.
    "POST /projects/": r'^\{"detail":"[^"]*"\}$',
    "PATCH /projects/{slug}/": r'^\{"detail":"[^"]*"\}$',
    "GET /projects/{slug}/items/": (
        r'no import \d+\.","field":"batch"|"field":"(label|tag|author)"\}$'
    ),
    "POST /projects/{slug}/members/": r"^\{\"detail\":\"no user named",
    "POST /projects/{slug}/items/bulk/": r'"field":"(reason|tag|kind)"\}$|Give ids or filters',
    "POST /projects/{slug}/perturbations/": r'^\{"pivot":\["No original with id',
    "POST /projects/{slug}/releases/": r"add up to 1|min_agreement for \w+ must be from 0 to",
    "POST /projects/{slug}/validation/{item}/vote/": r'"field":"(label|answer)"\}$',
    "POST /projects/{slug}/validators/{username}/": (
        r"^\{\"detail\":\"(no (user|validator)|give qualified or action, one of them)"
    ),
    "POST /projects/{slug}/examples/import/": r'^\{"errors":\[|{FILE}',
    "POST /projects/{slug}/import/votes/": r'^\{"errors":\[|{FILE}',
    "POST /projects/{slug}/import/sets/": (  # the files that its `format` needs
        r'^\{"errors":\[|{FILE}|^\{("[a-z]+":\["This file is required\."\],?)+\}$'
    ),
    "POST /projects/{slug}/import/published/": r'^\{"errors":\[|needs a [a-z-]+ project|{FILE}',
    "POST /import/published/": r'^\{"errors":\[|a project with the slug|{FILE}',
    "POST /models/": r"Hugging Face cache|holds no config\.json|The hub has no model",
    "POST /analyses/": r"Name the release \(artifacts, inoculation\) or the runs",
    "POST /models/{id}/check/": r"Only served models are checked",
    "GET /evaluations/compare/": r'"field":"runs"\}$',
    "POST /projects/{slug}/webhooks/": r'"field":"url"\}$',
    "POST /notifications/read/": r'^\{"ids":\["Give ids, or all: true\."\]\}$',
    "POST /projects/{slug}/perturbations/{id}/comments/": (
        r'^\{"body":\["This field may not be blank'
    ),
    "PATCH /projects/{slug}/perturbations/{id}/comments/{comment_id}/": (
        r'^\{"body":\["This field may not be blank'
    ),
}  # fmt: skip
# Every write: text never holds NUL (PostgreSQL cannot store it), a file is never empty.
EVERYWHERE = r'may not contain NUL characters|\["The submitted file is empty\."\]'
REFUSALS = {where: rule.replace("{FILE}", EVERYWHERE) for where, rule in REFUSALS.items()}
# Per operation and mode: the whole test runs in about a minute per token (more to search).
EXAMPLES = int(os.environ.get("CONFORMANCE_EXAMPLES", 8))


def operations():  # type: ignore[no-untyped-def]
    """Every operation, the project's deletion last so that the others find it."""
    found = [result.ok() for result in schema.get_all_operations()]
    return sorted(found, key=lambda op: op.method == "delete" and op.path.endswith("{slug}/"))


def failures(operation, mode, headers, base_url, world) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The distinct failures of one operation's generated requests (its label, the check and
    the status code), each with the first request and answer that showed it."""
    found: dict[str, str] = {}
    path_parameters = {parameter.name: None for parameter in operation.path_parameters}
    real_ids(operation.path, path_parameters, world)
    known = {name: value for name, value in path_parameters.items() if value is not None}
    strategy = operation.as_strategy(mode, path_parameters=known)

    @given(case=strategy)
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,  # mostly the same requests on every run
        suppress_health_check=list(HealthCheck),
    )
    def probe(case):  # type: ignore[no-untyped-def]
        response = case.call(base_url=base_url, headers=headers)
        try:
            case.validate_response(response, checks=CHECKS)
        except (Failure, FailureGroup) as error:
            for failure in getattr(error, "exceptions", [error]):
                where = operation.label.replace(" /api/", " /", 1)
                if refused_by_a_documented_rule(where, failure, response):
                    continue
                key = f"{where} {mode.value} {response.status_code}: {failure.title}"
                answer = response.content[:200].decode(errors="replace")
                sent = f"query={case.query} body={str(case.body)[:100]}"
                found.setdefault(key, f"{key}\n    {sent}\n    -> {answer}")

    with contextlib.suppress(Unsatisfiable):  # nothing here can be made invalid
        probe()
    return found


def refused_by_a_documented_rule(where: str, failure: Failure, response) -> bool:  # type: ignore[no-untyped-def]
    rule = "|".join(filter(None, [REFUSALS.get(where), EVERYWHERE]))
    return (
        isinstance(failure, RejectedPositiveData)
        and response.status_code == 400
        and re.search(rule, response.content.decode(errors="replace")) is not None
    )


def test_every_refusal_let_through_is_documented():
    """Each operation whose 400 the test lets through says why in the schema."""
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    for where in REFUSALS:
        method, path = where.split(" ")
        answer = paths[f"/api{path}"][method.lower()]["responses"]["400"]
        assert "; also when " in answer["description"], where


@pytest.mark.parametrize("role", ["staff", "validator"])
def test_every_answer_is_the_one_the_schema_documents(role, live_server, world):  # type: ignore[no-untyped-def]
    headers = {"Authorization": f"Token {world['tokens'][role]}"}
    found: dict[str, str] = {}
    for operation in operations():
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            found |= failures(operation, mode, headers, live_server.url, world)
    report = "\n".join(found[key] for key in sorted(found))
    assert not found, f"{len(found)} distinct failures:\n{report}"
