"""Each event is announced where it happens, once its transaction commits: a release
published, a run or a worker's import finished, an item resolved (and a perturbation the
validators disputed). The deliveries' tasks are caught here, not sent."""

import pytest

from annotation.imports.tasks import run_import_task
from annotation.models import ImportJob, Webhook, WebhookDelivery
from annotation.models.webhooks import EVENTS
from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runs.tasks import run_evaluation_task
from tests.factories import member, released_contrast_sets, submitted_perturbation, vote_all

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def hook(project):  # type: ignore[no-untyped-def]
    return Webhook.objects.create(project=project, url="https://example.org/", events=list(EVENTS))


@pytest.fixture
def committed(django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    """Run `work`, then what it left for after its commit (the events), catching the
    deliveries' tasks those queue; the events' payloads, in order."""

    def run(work):  # type: ignore[no-untyped-def]
        with django_capture_on_commit_callbacks() as after:
            work()
        with django_capture_on_commit_callbacks() as tasks:
            for callback in after:
                callback()
        deliveries = list(WebhookDelivery.objects.order_by("pk"))
        assert len(tasks) == len(deliveries)
        return [delivery.payload for delivery in deliveries]

    return run


def test_a_published_release_is_announced(project, people, hook, committed):
    (payload,) = committed(lambda: released_contrast_sets(project, people))
    assert payload["type"] == "release.published"
    release = project.releases.get()
    assert payload["data"]["release"]["id"] == release.pk
    assert payload["data"]["release"]["version"] == "1.0"
    assert payload["data"]["release"]["sha256"] == release.sha256


def test_an_item_the_validators_relabel_is_resolved_and_disputed(project, people, hook, committed):
    perturbation = submitted_perturbation(project, people["expert"], label="negative")
    validators = [member(project, f"val{n}", "validator") for n in range(5)]
    item = perturbation.item
    payloads = committed(lambda: vote_all(item, validators, ["positive"] * 5))
    assert [p["type"] for p in payloads] == ["item.resolved", "perturbation.disputed"]
    resolved, disputed = (p["data"] for p in payloads)
    assert resolved["item"]["id"] == item.pk and resolved["item"]["status"] == "disputed"
    assert resolved["item"]["majority_label"] == "positive"
    assert disputed["perturbation"] == {"id": perturbation.pk, "majority_label": "positive"}


def test_an_item_the_validators_accept_is_resolved_and_not_disputed(
    project, people, hook, committed
):
    perturbation = submitted_perturbation(project, people["expert"], label="negative")
    validators = [member(project, f"val{n}", "validator") for n in range(5)]
    payloads = committed(lambda: vote_all(perturbation.item, validators, ["negative"] * 5))
    assert [(p["type"], p["data"]["item"]["status"]) for p in payloads] == [
        ("item.resolved", "accepted")
    ]


def test_a_failed_run_is_announced_from_its_task(project, people, hook, committed, settings):
    release = released_contrast_sets(project, people)
    WebhookDelivery.objects.all().delete()
    spec = ModelSpec.objects.create(
        project=project, name="broken", kind="python", source="no.such:f"
    )
    run = EvaluationRun.objects.create(release=release, model=spec, split="test")
    (payload,) = committed(lambda: run_evaluation_task.apply(args=(run.pk,)))
    assert payload["type"] == "run.failed"
    assert payload["data"]["run"]["id"] == run.pk and payload["data"]["run"]["model"] == "broken"
    assert payload["data"]["run"]["status"] == "failed" and payload["data"]["run"]["error"]


def test_a_workers_import_is_announced_when_it_finishes(project, people, hook, committed):
    job = ImportJob.objects.create(project=project, kind="votes", created_by=people["admin"])
    (payload,) = committed(lambda: run_import_task.apply(args=(job.pk,)))
    assert payload["type"] == "import.finished"
    assert payload["data"]["import"]["id"] == job.pk
    assert payload["data"]["import"]["status"] == "failed"  # its file is gone


def test_no_webhook_no_delivery(project, people, committed):
    assert committed(lambda: released_contrast_sets(project, people)) == []
