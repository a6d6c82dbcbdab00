"""A new model kind is one module and one line of registration (docs/models.md, "Adding a
model kind"): a throwaway kind, one class here and one line into the registry, is offered by
the Models page and the API, registered, and scored by a run, with no migration and no other
table to edit."""

from typing import Any

import pytest
from django.test import Client

from annotation.errors import DomainError
from annotation.models import Project
from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runs.execute import run_evaluation
from evaluation.runs.kinds import KINDS
from evaluation.runs.scorer import Advance, ModelKind, ScoredPart, prediction_row
from evaluation.runs.services import evaluation_enqueue
from evaluation.specs.services import model_register

pytestmark = pytest.mark.django_db


class FirstLabel(ModelKind):
    """Says the project's first label for every example."""

    name, label = "first-label", "first label (a test's kind)"
    task_types = (Project.TaskType.CLASSIFICATION,)
    settings = ("batch_size",)

    def score(self, run: EvaluationRun, examples: list[dict[str, Any]], advance: Advance) -> Any:
        first = run.release.project.labels[0]
        advance(len(examples))
        return ScoredPart([prediction_row(e, label=first) for e in examples])


@pytest.fixture
def registered(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setitem(KINDS, FirstLabel.name, FirstLabel())  # the one line; undone after


def register(client, kind):  # type: ignore[no-untyped-def]
    payload = {"project": "sentiment", "name": "first", "kind": kind, "source": "anything"}
    return client.post("/api/models/", payload, format="json")


def test_a_kind_registered_in_one_line_is_offered_registered_and_scored(
    registered, project, people, released, client_for
):
    page = Client()
    page.force_login(people["admin"])
    html = page.get(f"/p/{project.slug}/models/").content.decode()
    assert '<option value="first-label">first label (a test&#x27;s kind)</option>' in html
    assert 'data-kinds="hf-sequence-classification' in html  # batch_size's, then ours
    shown = [line for line in html.splitlines() if 'name="batch_size"' in line]
    assert shown and "first-label" in shown[0]

    made = register(client_for(people["admin"]), FirstLabel.name)
    assert made.status_code == 201, made.json()
    assert made.json()["kind"] == FirstLabel.name
    spec = ModelSpec.objects.get(pk=made.json()["id"])
    table = page.get(f"/p/{project.slug}/models/").content.decode().split("</table>")[0]
    assert "<td>first label (a test&#x27;s kind)</td>" in table  # the Kind column names it
    run = evaluation_enqueue(release=released, model=spec, split="test", user=None, send=False)
    run = run_evaluation(run.pk)
    assert run.status == "succeeded", run.error
    assert set(run.predictions.values_list("label", flat=True)) == {project.labels[0]}
    assert 0 <= run.metrics["original_accuracy"] <= 1


def test_a_kind_that_is_not_registered_is_refused(project, people, client_for):
    refused = register(client_for(people["admin"]), FirstLabel.name)
    assert refused.status_code == 400 and "kind" in refused.json()  # not a choice
    assert not ModelSpec.objects.exists()


def test_a_kind_refuses_projects_of_the_task_types_it_does_not_score(registered, project):
    project.task_type = Project.TaskType.FREE_TEXT
    with pytest.raises(DomainError, match="not first-label"):
        model_register(project=project, user=None, name="first", kind="first-label", source="x")
