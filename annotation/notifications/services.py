"""Notifications made, read and chosen (README, "Notifications"). They are made where the
project's events are announced (webhooks/events.py), after the event's transaction commits;
each goes to one user, the author of the work or the one who started the job, or (a release)
to every member, and only if that user wants its kind. No text names a validator, a vote or a
count: a validator reads nothing here about an item they may still vote on."""

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from annotation.errors import DomainError
from annotation.models import Membership, Notification, NotificationPreference, Project
from annotation.models.notifications import KINDS

TEXT_MAX = 500


def notify(users: Iterable[int], project: Project, kind: str, text: str, url: str = "") -> int:
    """One notification of `kind` to each of `users` (ids) who wants it; how many."""
    ids = {pk for pk in users if pk is not None}
    if not ids:
        return 0
    chosen = {p.user_id: p for p in NotificationPreference.objects.filter(user_id__in=ids)}
    rows = [
        Notification(user_id=pk, project=project, kind=kind, text=text[:TEXT_MAX], url=url)
        for pk in sorted(ids)
        if pk not in chosen or chosen[pk].wants(kind)
    ]
    Notification.objects.bulk_create(rows)
    return len(rows)


def _mine(project: Project) -> str:
    return reverse("my-work", args=[project.slug])


def perturbation_outcome(project: Project, perturbation: Any, kind: str, what: str) -> int:
    """The author's: their perturbation `what` ("was disputed by the validators", …)."""
    text = f"Your perturbation #{perturbation.pk} in {project.name} {what}."
    return notify([perturbation.author_id], project, kind, text, _mine(project))


def job_finished(job: Any, project: Project, kind: str, name: str, url: str) -> int:
    """The one who started a job (an import, a run, an analysis): it succeeded or failed."""
    if job.status not in ("succeeded", "failed"):
        return 0
    text = f"Your {name} in {project.name} {job.status}."
    if job.status == "failed" and job.error:
        text += f" {job.error}"
    return notify([job.created_by_id], project, kind, text, url)


def release_published(release: Any) -> int:
    """Every member of the release's project: its version, nothing it counts."""
    project = release.project
    members = Membership.objects.filter(project=project).values_list("user_id", flat=True)
    text = f"Release {release.version} of {project.name} was published."
    url = reverse("release-detail", args=[project.slug, release.pk])
    return notify(members, project, "release.published", text, url)


@transaction.atomic
def mark_read(*, user: Any, ids: list[int] | None) -> int:
    """Mark the user's notifications `ids` read (all of theirs if None); how many changed.
    Another user's ids change nothing."""
    unread = Notification.objects.filter(user=user, read_at=None)
    if ids is not None:
        unread = unread.filter(pk__in=ids)
    return unread.update(read_at=timezone.now())


@transaction.atomic
def preferences_save(*, user: Any, kinds: list[str], email: bool) -> NotificationPreference:
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        raise DomainError(f"No such kind of notification: {', '.join(unknown)}.", field="kinds")
    preference, _ = NotificationPreference.objects.get_or_create(user=user)
    preference.kinds = [kind for kind in KINDS if kind in kinds]
    preference.email = email
    preference.save(update_fields=["kinds", "email"])
    return preference


DIGEST_EVERY = timedelta(hours=1)
DIGEST_MAX_LINES = 50


def digests_send(now: datetime | None = None) -> int:
    """One e-mail to each user who chose e-mail, has no digest of the last hour and has unread
    notifications not yet e-mailed (the periodic task's work); how many e-mails were sent."""
    now = now or timezone.now()
    due = NotificationPreference.objects.filter(email=True).filter(
        Q(last_digest_at=None) | Q(last_digest_at__lte=now - DIGEST_EVERY)
    )
    return sum(_digest(pk, now) for pk in due.values_list("pk", flat=True))


@transaction.atomic
def _digest(preference_id: int, now: datetime) -> int:
    """A user's digest, their choices locked: a failed send rolls back, and is tried again."""
    preference = (
        NotificationPreference.objects.select_for_update()
        .select_related("user")
        .get(pk=preference_id)
    )
    due = preference.last_digest_at is None or preference.last_digest_at <= now - DIGEST_EVERY
    if not (due and preference.email and preference.user.email):
        return 0
    pending = Notification.objects.filter(
        user=preference.user, read_at=None, emailed_at=None, kind__in=preference.kinds
    ).select_related("project")
    rows = list(pending.order_by("id"))
    if not rows:
        return 0
    send_mail(_subject(rows), _body(rows), None, [preference.user.email])
    Notification.objects.filter(pk__in=[row.pk for row in rows]).update(emailed_at=now)
    preference.last_digest_at = now
    preference.save(update_fields=["last_digest_at"])
    return 1


def _subject(rows: list[Notification]) -> str:
    return f"ContrastLab: {len(rows)} new notification{'s' if len(rows) != 1 else ''}"


def _body(rows: list[Notification]) -> str:
    site = settings.SITE_URL.rstrip("/")
    lines = [f"- {row.text}" + (f"\n  {site}{row.url}" if row.url else "") for row in rows]
    shown = lines[:DIGEST_MAX_LINES]
    if len(lines) > len(shown):
        shown.append(f"… and {len(lines) - len(shown)} more in your inbox.")
    inbox = f"{site}{reverse('notifications')}"
    return (
        "Hello,\n\nWhat happened on ContrastLab since your last digest:\n\n"
        + "\n".join(shown)
        + f"\n\nYour inbox, and which notifications you get by e-mail: {inbox}\n"
    )


def comment_posted(comment: Any, links: dict[int, str]) -> int:
    """A comment committed: each user of `links` (id -> the page where they read its thread:
    comments.services.reading_url, which keeps validators blind) is told: its perturbation's
    author that it was commented on, everyone else that it mentions them. No text names the
    comment's author."""
    perturbation, project = comment.perturbation, comment.project
    made = 0
    for pk, url in sorted(links.items()):
        if pk == perturbation.author_id:
            text = f"A comment on your perturbation #{perturbation.pk} in {project.name}."
            made += notify([pk], project, "perturbation.commented", text, url)
        else:
            text = (
                f"You were mentioned in a comment on perturbation #{perturbation.pk} "
                f"in {project.name}."
            )
            made += notify([pk], project, "mention", text, url)
    return made
