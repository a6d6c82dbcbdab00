"""A project's votes download, per vote and per item, for admins only; they match what the
validators did, and the per-item counts match the votes."""

import csv
import io
import json
from collections import Counter

import pytest

from annotation.models import Vote
from tests.factories import import_votes

pytestmark = pytest.mark.django_db


def fetched(client, url):  # type: ignore[no-untyped-def]
    answer = client.get(url)
    assert answer.status_code == 200, answer
    return b"".join(answer.streaming_content).decode()


def test_votes_download_per_vote_and_per_item(project, people, client_for):
    admin = client_for(people["admin"])
    lines = [
        {"id": f"r{n}", "fields": {"text": f"=cmd {n}"},
         "label_distribution": {"positive": ["w1", "w2", "w3"][: 1 + n % 3],
                                "negative": ["w4", "w5"]}}
        for n in range(7)
    ]  # fmt: skip
    assert import_votes(admin, project, lines).status_code in (200, 201)
    url = f"/api/projects/{project.slug}/votes/"
    votes = [json.loads(line) for line in fetched(admin, url).splitlines()]
    assert (
        len(votes)
        == Vote.objects.filter(item__project=project).count()
        == sum(len(line["label_distribution"]["positive"]) + 2 for line in lines)
    )
    mine = {(v["item"], v["validator"].rsplit("-", 1)[-1], v["label"]) for v in votes}
    wanted = {
        (line["id"], worker, label)
        for line in lines
        for label, workers in line["label_distribution"].items()
        for worker in workers
    }
    assert mine == wanted
    items = [json.loads(line) for line in fetched(admin, url + "?by=item").splitlines()]
    assert len(items) == len(lines)
    counted = Counter((v["item"], v["label"]) for v in votes if v["counted"])
    for item in items:
        assert item["votes_per_label"] == {
            label: n for (i, label), n in counted.items() if i == item["item"]
        }
    table = list(csv.DictReader(io.StringIO(fetched(admin, url + "?by=item&format=csv"))))
    assert [row["item"] for row in table] == [item["item"] for item in items]
    assert fetched(admin, url + "?format=csv").startswith("item,split,validator,label")
    per_validator = [json.loads(x) for x in fetched(admin, url + "?by=validator").splitlines()]
    assert {v["validator"].rsplit("-", 1)[-1]: v["votes"] for v in per_validator} == Counter(
        v["validator"].rsplit("-", 1)[-1] for v in votes
    )
    assert admin.get(url + "?by=worker").status_code == 400
    assert admin.get(url + "?format=xlsx").status_code == 400
    for role in ("expert", "validator", "outsider"):
        assert client_for(people[role]).get(url).status_code in (403, 404)
