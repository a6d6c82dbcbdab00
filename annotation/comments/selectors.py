"""Reading comments (docs/workflows.md, "Comments"): who may read a perturbation's thread, and
the thread as a reader sees it. Admins, and the perturbation's author, read it with its
authors' names; a validator reads it only once they have voted on the item, and an expert
whom a comment of it mentions, without names (blindness, docs/security.md); anyone else finds
no such perturbation (404)."""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.http import Http404
from django.urls import reverse
from django.utils.safestring import SafeString

from annotation.comments.mentions import comment_html
from annotation.comments.services import may_delete, may_read, may_write
from annotation.models import Comment, Membership, Perturbation, Project, Release
from annotation.permissions import project_for


@dataclass(frozen=True)
class ShownComment:
    id: int
    author: str | None  # None: hidden from this reader (a validator), or a former member
    body: str
    html: SafeString
    created_at: datetime
    edited_at: datetime | None
    may_edit: bool
    may_delete: bool


def readable(user: Any, slug: str, pk: int) -> tuple[Project, Perturbation]:
    """The project and its perturbation `pk`, if `user` may read its thread; else 404."""
    project = project_for(user, slug)
    perturbation = Perturbation.objects.filter(project=project, pk=pk).first()
    roles: set[str] = project.user_roles  # type: ignore[attr-defined]
    if perturbation is None or not may_read(user, perturbation, roles):
        raise Http404("No such perturbation.")
    perturbation.project = project
    return project, perturbation


def comment_of(user: Any, slug: str, pk: int, comment_id: int) -> Comment:
    project, perturbation = readable(user, slug, pk)
    comment = Comment.objects.filter(perturbation=perturbation, pk=comment_id).first()
    if comment is None:
        raise Http404("No such comment.")
    comment.project, comment.perturbation = project, perturbation
    return comment


def member_names(project: Project) -> set[str]:
    names = Membership.objects.filter(project=project).values_list("user__username", flat=True)
    return {name.lower() for name in names}


def thread(user: Any, perturbation: Perturbation, roles: set[str]) -> list[ShownComment]:
    """The perturbation's comments, oldest first, as `user` (holding `roles`) may see them."""
    named = may_write(user, perturbation, roles)
    members = member_names(perturbation.project)
    comments = perturbation.comments.select_related("author")
    return [
        ShownComment(
            id=comment.pk,
            author=comment.author.username if named and comment.author else None,
            body=comment.body,
            html=comment_html(comment.body, members),
            created_at=comment.created_at,
            edited_at=comment.edited_at,
            may_edit=comment.is_by(user),
            may_delete=named and may_delete(user, comment, perturbation.project),
        )
        for comment in comments
    ]


def thread_context(user: Any, perturbation: Perturbation, back: str) -> dict[str, Any]:
    """What the pages' thread (templates/annotation/_comments.html) shows: the comments, and
    the form to post one when `user` may; `back` is where each form returns."""
    roles: set[str] = perturbation.project.user_roles  # type: ignore[attr-defined]
    slug = perturbation.project.slug
    return {
        "comments": thread(user, perturbation, roles),
        "may_write": may_write(user, perturbation, roles),
        "post_url": reverse("comment-post", args=[slug, perturbation.pk]),
        "slug": slug,
        "perturbation_id": perturbation.pk,
        "back": back,
    }


def counts(perturbation_ids: list[int]) -> dict[int, int]:
    """How many comments each perturbation has (the Disputes page's column)."""
    found: dict[int, int] = {}
    for pid in Comment.objects.filter(perturbation_id__in=perturbation_ids).values_list(
        "perturbation_id", flat=True
    ):
        found[pid] = found.get(pid, 0) + 1
    return found


def released_comments(release: Release) -> Iterator[dict[str, Any]]:
    """The comments on a release's perturbations, for its comments.jsonl (the release option
    `include_comments`): no names leave the product; `by` says whether the perturbation's
    author wrote it or an admin."""
    comments = (
        Comment.objects.filter(perturbation__release_entries__release=release)
        .select_related("perturbation")
        .order_by("perturbation_id", "created_at", "id")
    )
    for comment in comments:
        perturbation = comment.perturbation
        yield {
            "perturbation": perturbation.release_id,
            "by": "author" if comment.author_id == perturbation.author_id else "admin",
            "body": comment.body,
            "created_at": comment.created_at.isoformat(),
            "edited_at": comment.edited_at.isoformat() if comment.edited_at else None,
        }
