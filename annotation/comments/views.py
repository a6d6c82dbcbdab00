"""The pages' comment forms (templates/annotation/_comments.html): post, edit and delete, each
back to the page it came from (the Data row, the editor, the thread's own page); and the
thread's own page, for readers with no Data row of it (a validator who voted, an expert
mentioned): the perturbation's text and its comments, nothing else of it."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from annotation.comments import selectors, services
from annotation.errors import DomainError, flash_refusal


def _back(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    back = request.POST.get("back", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = reverse("data-item", args=[slug, "perturbations", pk])
    return redirect(f"{back.split('#')[0]}#comments")


@login_required
def thread_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, perturbation = selectors.readable(request.user, slug, pk)
    context = {
        "project": project,
        "perturbation": perturbation,
        "thread": selectors.thread_context(request.user, perturbation, request.get_full_path()),
    }
    return render(request, "annotation/comment_thread.html", context)


@login_required
@require_POST
def comment_post(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, perturbation = selectors.readable(request.user, slug, pk)
    if not services.may_write(request.user, perturbation, project.user_roles):  # type: ignore[attr-defined]
        raise PermissionDenied("Only admins, and the perturbation's author, comment.")
    try:
        services.comment_posted(
            perturbation=perturbation, author=request.user, body=request.POST.get("body", "")
        )
    except DomainError as error:
        flash_refusal(request, error)
    else:
        messages.success(request, "Comment posted.")
    return _back(request, slug, pk)


@login_required
@require_POST
def comment_edit(request: HttpRequest, slug: str, pk: int, comment_id: int) -> HttpResponse:
    comment = selectors.comment_of(request.user, slug, pk, comment_id)
    if not comment.is_by(request.user):
        raise PermissionDenied("Only its author edits a comment.")
    try:
        services.comment_edit(comment=comment, user=request.user, body=request.POST.get("body", ""))
    except DomainError as error:
        flash_refusal(request, error)
    else:
        messages.success(request, "Comment edited.")
    return _back(request, slug, pk)


@login_required
@require_POST
def comment_delete(request: HttpRequest, slug: str, pk: int, comment_id: int) -> HttpResponse:
    comment = selectors.comment_of(request.user, slug, pk, comment_id)
    if not services.may_delete(request.user, comment, comment.project):
        raise PermissionDenied("Only its author, or an admin, deletes a comment.")
    try:
        services.comment_delete(comment=comment, user=request.user)
    except DomainError as error:
        flash_refusal(request, error)
    else:
        messages.success(request, "Comment deleted.")
    return _back(request, slug, pk)
