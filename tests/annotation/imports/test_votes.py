import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import ValidationItem

pytestmark = pytest.mark.django_db


def test_imported_responses_get_majorities_and_statistics(project, people, client_for):
    lines = [
        {"id": "x1", "fields": {"text": "Fine."}, "label_distribution": {
            "positive": ["w1", "w2", "w3"], "negative": ["w4"], "mixed": ["w5"]}},
        {"id": "x2", "fields": {"text": "Meh."}, "label_distribution": {
            "positive": ["w1", "w2"], "negative": ["w3", "w4"], "mixed": ["w5"]}},
    ]  # fmt: skip
    content = "\n".join(json.dumps(line) for line in lines).encode()
    response = client_for(people["admin"]).post(
        f"/api/projects/{project.slug}/import/votes/",
        {"file": SimpleUploadedFile("votes.jsonl", content)},
        format="multipart",
    )
    assert response.status_code == 201 and response.json() == {"imported": 2}
    items = {i.external_id: i for i in ValidationItem.objects.filter(project=project)}
    assert items["x1"].majority_label == "positive" and items["x2"].majority_label == ""
    stats = client_for(people["admin"]).get(f"/api/projects/{project.slug}/stats/").json()
    assert stats["per_split"]["test"]["items"] == 2
    assert stats["fleiss_kappa"] is not None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            {"id": "a", "fields": {"text": "x"}, "label_distribution": {"great": ["w1", "w2"]}},
            "unknown label 'great'",
        ),
        (
            {"id": "a", "fields": {"text": "x"}, "label_distribution": {"positive": ["w1"]}},
            "at least two responses",
        ),
        (
            {"id": "a", "fields": {"body": "x"}, "label_distribution": {"positive": ["w1", "w2"]}},
            "missing field 'text'",
        ),
        (
            {
                "id": "a",
                "fields": {"text": "x"},
                "label_distribution": {"positive": ["w1"], "negative": ["w1"]},
            },
            "answers twice",
        ),
        ({"fields": {"text": "x"}, "label_distribution": {"positive": ["w1", "w2"]}}, "missing id"),
    ],
)
def test_bad_vote_import_is_rejected_with_line_and_imports_nothing(
    project, people, client_for, line, message
):
    good = {"id": "ok", "fields": {"text": "y"}, "label_distribution": {"positive": ["w1", "w2"]}}
    content = f"{json.dumps(good)}\n{json.dumps(line)}".encode()
    response = client_for(people["admin"]).post(
        f"/api/projects/{project.slug}/import/votes/",
        {"file": SimpleUploadedFile("v.jsonl", content)},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["line"] == 2
    assert message in response.json()["errors"][0]["message"]
    assert not ValidationItem.objects.filter(project=project).exists()
