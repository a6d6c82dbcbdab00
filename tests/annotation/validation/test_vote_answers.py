"""The vote's and the next item's answers are what the schema documents, key for key: VoteView
built its answer by hand, so `VoteResultSerializer` fed the schema alone, and the schema's
next item lacked the `fields_html` every answer carries."""

import pytest
from drf_spectacular.generators import SchemaGenerator

from tests.factories import submitted_perturbation

pytestmark = pytest.mark.django_db


def documented(schemas: dict, name: str) -> set[str]:
    return set(schemas[name]["properties"])


def test_the_vote_and_next_answers_have_the_documented_keys(no_controls, people, crowd, client_for):  # type: ignore[no-untyped-def]
    schemas = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    for _ in range(2):
        submitted_perturbation(no_controls, people["expert"])
    api = client_for(crowd[0])
    base = f"/api/projects/{no_controls.slug}/validation"
    first = api.get(f"{base}/next/").json()
    assert set(first) == documented(schemas, "NextItem")
    voted = api.post(f"{base}/{first['item']}/vote/", {"label": "negative"}, format="json")
    body = voted.json()
    assert voted.status_code == 201 and set(body) == documented(schemas, "VoteResult")
    assert set(body["vote"]) == documented(schemas, "VoteOutput")
    assert set(body["next"]) == documented(schemas, "NextItem")
    assert "fields_html" in documented(schemas, "NextItem")
