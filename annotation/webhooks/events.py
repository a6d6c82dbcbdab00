"""The events a project's webhooks hear (README, "Webhooks"): what each one says, and its
deliveries made and queued. Each is announced where it happens, once its transaction commits:

    transaction.on_commit(lambda: events.release_published(release), robust=True)

`robust`: a webhook's trouble (the broker down, say) is logged and never fails the request or
the job whose event it is, which committed already. Every event's data names the project by
its slug and the object by the id the API knows it by. An event that no webhook of the
project wants costs one query."""

from typing import Any

from django.db import transaction

from annotation.models import (
    ImportJob,
    Perturbation,
    Project,
    Release,
    ValidationItem,
    Webhook,
    WebhookDelivery,
)
from annotation.models.webhooks import TEST_EVENT
from annotation.webhooks.services import deliveries_make
from annotation.webhooks.tasks import deliver_webhook_task


def announce(project: Project, event: str, data: dict[str, Any]) -> int:
    """Deliveries of `event` to each webhook of `project` that wants it, queued once they
    commit; how many."""
    hooks = [hook for hook in Webhook.objects.filter(project=project) if hook.wants(event)]
    if not hooks:
        return 0
    body = {"project": project.slug, **data}
    for delivery in deliveries_make(hooks, event, body):
        queue_attempt(delivery)
    return len(hooks)


def queue_attempt(delivery: WebhookDelivery) -> None:
    transaction.on_commit(lambda: deliver_webhook_task.delay(delivery.pk), robust=True)


def release_published(release: Release) -> None:
    data = {"version": release.version, "sha256": release.sha256, "counts": release.counts}
    announce(release.project, "release.published", {"release": {"id": release.pk, **data}})


def run_finished(run: Any) -> None:
    """A run (evaluation.models.EvaluationRun, which annotation may not import) that succeeded
    or failed; a cancelled one is no event."""
    if run is None or run.status not in ("succeeded", "failed"):
        return
    data = {
        "id": run.pk,
        "release": run.release_id,
        "model": run.model.name,
        "split": run.split,
        "status": run.status,
        "error": run.error,
    }
    announce(run.release.project, f"run.{run.status}", {"run": data})


def import_finished(job: ImportJob | None) -> None:
    """An import a worker ran (a large one), succeeded or failed."""
    if job is None or job.status not in ("succeeded", "failed"):
        return
    data = {"id": job.pk, "kind": job.kind, "status": job.status, "error": job.error}
    announce(job.project, "import.finished", {"import": data})


def item_resolved(item: ValidationItem, status: str) -> None:
    """An item's votes decided it (`status`: its perturbation's, or an original's outcome);
    a perturbation the validators relabelled is disputed too."""
    data = {
        "id": item.pk,
        "perturbation": item.perturbation_id,
        "majority_label": item.majority_label,
        "majority_answers": item.majority_answers,
        "status": status,
    }
    announce(item.project, "item.resolved", {"item": data})
    if item.perturbation_id is not None and status == Perturbation.Status.DISPUTED:
        disputed = {"id": item.perturbation_id, "majority_label": item.majority_label}
        announce(item.project, "perturbation.disputed", {"perturbation": disputed})


def send_test(webhook: Webhook) -> None:
    """The "send a test event" button's: a delivery of TEST_EVENT to this webhook alone."""
    data = {"project": webhook.project.slug, "webhook": webhook.pk, "test": True}
    (delivery,) = deliveries_make([webhook], TEST_EVENT, data)
    queue_attempt(delivery)
