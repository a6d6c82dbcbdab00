"""The events a project's webhooks hear (README, "Webhooks"): what each one says, and its
deliveries made and queued, and the notifications each one makes (notifications/services.py:
the one set of event sites both read). Each is announced where it happens, once its
transaction commits:

    transaction.on_commit(lambda: events.release_published(release), robust=True)

`robust`: a webhook's trouble (the broker down, say) is logged and never fails the request or
the job whose event it is, which committed already. Every event's data names the project by
its slug and the object by the id the API knows it by. An event that no webhook of the
project wants costs one query."""

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.urls import reverse

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
from annotation.notifications import services as notifications
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
    notifications.release_published(release)


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
    project = run.release.project
    announce(project, f"run.{run.status}", {"run": data})
    url = reverse("run", args=[project.slug, run.pk])
    notifications.job_finished(run, project, "run.finished", f"run of {run.model.name}", url)


def analysis_finished(analysis: Any) -> None:
    """An analysis (evaluation.models.Analysis) that succeeded or failed: a notification to
    the one who started it; no webhook hears it."""
    if analysis is None:
        return
    project = analysis.project
    url = reverse("analysis", args=[project.slug, analysis.pk])
    name = f"{analysis.get_kind_display().lower()} analysis"
    notifications.job_finished(analysis, project, "analysis.finished", name, url)


@dataclass(frozen=True)
class ImportFinished:
    """An import that succeeded or failed, wherever it ran: a worker's job (`id`, the job's),
    or one run in a request or a command (`id` None; the project's Import page lists it).
    `created_by_id` None (a command) tells no one."""

    project: Project
    kind: str
    status: str
    error: str = ""
    created_by_id: int | None = None
    id: int | None = None
    batch: int | None = None

    @classmethod
    def of_job(cls, job: ImportJob) -> "ImportFinished":
        batch = job.result.get("batch") if isinstance(job.result, dict) else None
        return cls(job.project, job.kind, job.status, job.error, job.created_by_id, job.pk, batch)


def import_finished(finished: ImportFinished) -> None:
    """An import, succeeded or failed (annotation.imports.services.running, the end of every
    import, announces each once)."""
    if finished.status not in ("succeeded", "failed"):
        return
    project = finished.project
    data = {
        "id": finished.id,
        "kind": finished.kind,
        "status": finished.status,
        "error": finished.error,
        "batch": finished.batch,
    }
    announce(project, "import.finished", {"import": data})
    if finished.id is not None:
        url = reverse("import-job", args=[project.slug, finished.id])
    else:
        url = reverse("project-import", args=[project.slug])
    notifications.job_finished(finished, project, "import.finished", "import", url)


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
    if item.perturbation_id is not None:
        _resolved_told(item, status)


def _resolved_told(item: ValidationItem, status: str) -> None:
    """The author's notification of what the validators decided: disputed, or accepted."""
    said = {
        "disputed": ("perturbation.disputed", "was disputed by the validators"),
        "accepted": ("perturbation.decided", "was accepted by the validators"),
    }.get(str(status))
    if said is None:
        return
    rows = Perturbation.objects.filter(pk=item.perturbation_id or 0).only("pk", "author_id")
    if (found := rows.first()) is not None:
        notifications.perturbation_outcome(item.project, found, *said)


def perturbation_decided(perturbation: Perturbation, decision: str) -> None:
    """An admin adjudicated it (accept, reject; a reopen is no decision): its author is told;
    no webhook hears it."""
    if decision in ("accept", "reject"):
        what = f"was {decision}ed by an admin"
        project = perturbation.project
        notifications.perturbation_outcome(project, perturbation, "perturbation.decided", what)


def perturbations_sent_back(project: Project, perturbation_ids: list[int]) -> None:
    """Perturbations sent back to validation: each author is told; no webhook hears it."""
    sent = Perturbation.objects.filter(pk__in=perturbation_ids).only("pk", "author_id")
    for perturbation in sent.order_by("pk"):
        what = "was sent back to validation"
        notifications.perturbation_outcome(project, perturbation, "perturbation.sent_back", what)


def send_test(webhook: Webhook) -> None:
    """The "send a test event" button's: a delivery of TEST_EVENT to this webhook alone."""
    data = {"project": webhook.project.slug, "webhook": webhook.pk, "test": True}
    (delivery,) = deliveries_make([webhook], TEST_EVENT, data)
    queue_attempt(delivery)
