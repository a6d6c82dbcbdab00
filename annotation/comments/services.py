"""Writing comments (docs/workflows.md, "Comments"): post, edit, delete, each with its audit
entry. Admins and experts write (an expert on their own perturbations, as the Data page shows
them); the author edits and deletes their own, an admin deletes any.

Comments touch no vote, item or counter: what a validator can read (the queue, their counts,
the statistics) is the same before and after a comment (tests/security/test_blindness.py)."""

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from annotation.comments.mentions import mentioned_members, mentioned_names
from annotation.errors import DomainError
from annotation.models import AuditLog, Comment, Perturbation, Project, Vote
from annotation.models.comments import MAX_CHARS
from annotation.notifications import services as notifications
from annotation.permissions import Role, roles_of


def may_write(user: Any, perturbation: Perturbation, roles: set[str]) -> bool:
    """Admins on every perturbation of their project; experts on their own."""
    if Role.ADMIN in roles:
        return True
    return Role.EXPERT in roles and perturbation.author_id == user.pk


def may_read(user: Any, perturbation: Perturbation, roles: set[str]) -> bool:
    """Those who write; a validator once they voted on its item, never before, though a
    comment mentions them (blindness); an expert whom a comment of its thread mentions."""
    if may_write(user, perturbation, roles):
        return True
    if Role.VALIDATOR in roles:
        return Vote.objects.filter(item__perturbation=perturbation, validator_id=user.pk).exists()
    if Role.EXPERT not in roles:
        return False
    name = user.username.lower()
    bodies = Comment.objects.filter(perturbation=perturbation).values_list("body", flat=True)
    return any(name in mentioned_names(body) for body in bodies)


def reading_url(user: Any, perturbation: Perturbation, roles: set[str]) -> str | None:
    """The page where `user` reads the perturbation's thread (None: they may not): an admin
    its Data row; its author their draft's editor, or else their Data row; any other reader
    (a validator who voted, an expert mentioned) the thread's own page."""
    if not may_read(user, perturbation, roles):
        return None
    slug, pk = perturbation.project.slug, perturbation.pk
    mine = perturbation.author_id == user.pk
    if mine and perturbation.status == Perturbation.Status.DRAFT:
        return reverse("editor-draft", args=[slug, pk])
    if may_write(user, perturbation, roles):
        return reverse("data-item", args=[slug, "perturbations", pk])
    return reverse("comment-thread", args=[slug, pk])


def check_body(body: Any) -> str:
    text = body.strip() if isinstance(body, str) else ""
    if not text:
        raise DomainError("A comment needs some text.", field="body")
    if len(text) > MAX_CHARS:
        raise DomainError(f"A comment has {MAX_CHARS:,} characters at most.", field="body")
    return text


def announced(comment_id: int, mentioned_ids: list[int]) -> None:
    """Run once a posted comment commits: what tells people of it (its author's perturbation
    commented on, a mention: notifications/services.py, which keeps validators blind)."""
    comment = Comment.objects.select_related("perturbation", "project").filter(pk=comment_id)
    found = comment.first()
    if found is None:  # deleted meanwhile
        return
    perturbation = found.perturbation
    perturbation.project = found.project
    told = {perturbation.author_id, *mentioned_ids} - {found.author_id, None}
    links = {}
    for user in get_user_model().objects.filter(pk__in=told):
        url = reading_url(user, perturbation, roles_of(user, found.project))
        if url is not None:
            links[user.pk] = url
    notifications.comment_posted(found, links)


@transaction.atomic
def comment_posted(*, perturbation: Perturbation, author: Any, body: Any) -> Comment:
    """Post a comment on `perturbation` by `author`, after its commit call `announced` with the
    comment and the project members its text mentions (@name)."""
    roles = roles_of(author, perturbation.project)
    if not may_write(author, perturbation, roles):
        raise DomainError("Only admins, and the perturbation's author, comment.", code="forbidden")
    comment = Comment.objects.create(
        project=perturbation.project,
        perturbation=perturbation,
        author=author,
        body=check_body(body),
    )
    mentioned = [user.pk for user in mentioned_members(perturbation.project, comment.body)]
    AuditLog.record(
        actor=author,
        action="comment_created",
        project=perturbation.project,
        perturbation=perturbation.pk,
        comment=comment.pk,
    )
    # Robust: the notifications' trouble never turns a saved comment into an error.
    transaction.on_commit(lambda: announced(comment.pk, mentioned), robust=True)
    return comment


@transaction.atomic
def comment_edit(*, comment: Comment, user: Any, body: Any) -> Comment:
    if not comment.is_by(user):
        raise DomainError("Only its author edits a comment.", code="forbidden")
    comment.body = check_body(body)
    comment.edited_at = timezone.now()
    comment.save(update_fields=["body", "edited_at"])
    AuditLog.record(
        actor=user,
        action="comment_edited",
        project=comment.project,
        perturbation=comment.perturbation_id,
        comment=comment.pk,
    )
    return comment


def may_delete(user: Any, comment: Comment, project: Project) -> bool:
    return comment.is_by(user) or Role.ADMIN in roles_of(user, project)


@transaction.atomic
def comment_delete(*, comment: Comment, user: Any) -> None:
    if not may_delete(user, comment, comment.project):
        raise DomainError("Only its author, or an admin, deletes a comment.", code="forbidden")
    AuditLog.record(
        actor=user,
        action="comment_deleted",
        project=comment.project,
        perturbation=comment.perturbation_id,
        comment=comment.pk,
    )
    comment.delete()
