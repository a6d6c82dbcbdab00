"""Pages for validation: labelling, validator quality and disputes."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from annotation.comments import selectors as comment_selectors
from annotation.crowd.services import qualification
from annotation.crowd.services.state import participant_ran_out, validate_state
from annotation.errors import DomainError, flash_refusal
from annotation.models import Perturbation, ValidationItem, Vote
from annotation.pagination import table_page
from annotation.permissions import Role, project_for
from annotation.text.edits import word_diff
from annotation.validation.services import adjudication, quality, queue, votes
from annotation.validation.sql import RELATED_GAP
from annotation.validation.stats import validator_figures

SKIPPED = "skipped-items"
REPEAT = "You already voted on this item; your vote was counted once. Here is your next one."


@login_required
@never_cache  # Back, Forward and a reload ask again: the count and the item are never stale
def validate(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug, Role.VALIDATOR)
    user: Any = request.user
    crowd = validate_state(project=project, validator=user, session=request.session)
    if crowd.completed:  # a participant who labelled their items, or whose work ended
        return redirect("study-done", slug=slug, token=crowd.study_token)
    skipped = request.session.get(SKIPPED, {}).get(slug, [])
    item = queue.next_item(project=project, validator=user, skip=skipped)
    if item is None and participant_ran_out(crowd):
        return redirect("study-done", slug=slug, token=crowd.study_token)
    left = None if crowd.gated else queue.items_left(project=project, validator=user)
    if left is not None and crowd.of_items is not None:  # a participant: their study's
        left = min(left, max(0, crowd.of_items - crowd.done))
    context: dict[str, Any] = {
        "project": project,
        "item": item,
        "fields": project.shown_fields(item.fields) if item else [],
        "labels": project.all_labels,
        "n_task_labels": len(project.labels),
        "flags": [(flag, Vote.FLAG_KEYS[flag], flag.label) for flag in Vote.Flag],
        "done": crowd.done,
        "of_items": crowd.of_items,
        "gated": crowd.gated,
        "ended": "" if item else crowd.ended_message,
        "left": left,
        "undoable": None if crowd.gated else votes.last_undoable(project=project, validator=user),
        "skipped": len(skipped),
        "related_gap": RELATED_GAP,
    }
    if item is None and left:  # why the queue offers nothing while items are left
        context["skipped_left"] = _skipped_left(project, user, skipped)
        context["spaced"] = max(0, left - context["skipped_left"])
    return render(request, "annotation/validate.html", context)


def _skipped_left(project: Any, user: Any, skipped: list[int]) -> int:
    """Of the items skipped this session, those still open to this validator: why the queue
    offers nothing while items are left."""
    open_ = ValidationItem.objects.filter(project=project, pk__in=skipped, status="open")
    return open_.exclude(votes__validator=user).count()


@login_required
@require_POST
def unskip(request: HttpRequest, slug: str) -> HttpResponse:
    """The items skipped this session come back to the queue."""
    project_for(request.user, slug, Role.VALIDATOR)
    skipped = request.session.get(SKIPPED, {})
    skipped.pop(slug, None)
    request.session[SKIPPED] = skipped
    return redirect("validate", slug=slug)


@login_required
@require_POST
def vote(request: HttpRequest, slug: str, item: int) -> HttpResponse:
    project = project_for(request.user, slug, Role.VALIDATOR)
    try:
        cast = votes.vote_cast(
            project=project,
            item_id=item,
            validator=request.user,
            label=request.POST.get("label", ""),
            answer=request.POST.get("answer", "") if project.is_free_text else "",
            flags=request.POST.getlist("flags"),
            seconds_spent=request.POST.get("seconds_spent") or 0,
        )
    except DomainError as error:
        flash_refusal(request, error)
    else:
        if not cast.created:  # sent again (a second tab, Back): said, and counted once
            messages.info(request, REPEAT)
    return redirect("validate", slug=slug)


@login_required
@require_POST
def undo(request: HttpRequest, slug: str, item: int) -> HttpResponse:
    project = project_for(request.user, slug, Role.VALIDATOR)
    try:
        votes.check_undo_allowed(project)
        target = get_object_or_404(ValidationItem, project=project, pk=item)
        votes.vote_undo(item=target, validator=request.user)
    except DomainError as error:
        flash_refusal(request, error)
    else:
        messages.success(
            request, "Your last vote was taken back; the item is yours to label again."
        )
    return redirect("validate", slug=slug)


@login_required
@require_POST
def skip(request: HttpRequest, slug: str, item: int) -> HttpResponse:
    project_for(request.user, slug, Role.VALIDATOR)
    skipped = request.session.get(SKIPPED, {})
    skipped[slug] = [*skipped.get(slug, []), item][-200:]
    request.session[SKIPPED] = skipped
    return redirect("validate", slug=slug)


@login_required
def validators_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    figures = validator_figures(project)
    sorts = (
        "validator",
        "votes",
        "resolved_votes",
        "agreement",
        "median_seconds",
        "qualified",
        "qualification",
        "gold_accuracy",
    )
    context = {
        "project": project,
        "n_validators": len(figures),
        "histogram": agreement_histogram(figures),
        "min_votes": project.setting("validator_min_votes"),
        "max_disagreement": project.setting("validator_max_disagreement"),
        "attempts": project.setting("qualification_attempts"),
        **table_page(request, figures, sorts=sorts, search=("validator",)),
    }
    return render(request, "annotation/validators.html", context)


def agreement_histogram(figures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Validators per tenth of agreement, qualified and not: readable at any count."""
    bins = [{"low": n / 10, "qualified": 0, "unqualified": 0} for n in range(10)]
    for v in figures:
        if v["agreement"] is not None:
            bins[min(9, int(v["agreement"] * 10))][
                "qualified" if v["qualified"] else "unqualified"
            ] += 1
    top = max((b["qualified"] + b["unqualified"] for b in bins), default=0) or 1
    for b in bins:
        b["share"] = (b["qualified"] + b["unqualified"]) / top
    return bins


@login_required
@require_POST
def validator_qualify(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    if request.POST.get("retest") == "1":
        try:
            qualification.allow_retest(project=project, validator_id=user_id, actor=request.user)
        except DomainError as error:
            if error.code == "not_found":
                raise Http404(error.message) from None
            flash_refusal(request, error)  # not failed (any more): a retest given meanwhile
        else:
            messages.success(request, "The validator may take the test once more.")
        return redirect("validators", slug=slug)
    qualified = request.POST.get("qualified") == "1"
    try:
        quality.validator_set_qualified(
            project=project, validator_id=user_id, qualified=qualified, actor=request.user
        )
    except DomainError as error:
        raise Http404(error.message) from None
    resumed = request.POST.get("resume") == "1"
    done = "resumed" if resumed else "requalified" if qualified else "unqualified"
    messages.success(request, f"Validator {done}.")
    return redirect("validators", slug=slug)


@login_required
def disputes_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)

    def rows(status: str) -> list[dict[str, Any]]:
        perturbations = project.perturbations.filter(status=status).select_related(
            "pivot", "author"
        )
        return [
            {
                "p": p,
                "diff": word_diff(
                    project.editable_text(p.pivot.fields), project.editable_text(p.fields)
                ),
                "votes": votes.vote_counts(p),
            }
            for p in perturbations.prefetch_related("tags")[:200]
        ]

    disputed, undecided = rows(Perturbation.Status.DISPUTED), rows(Perturbation.Status.NO_MAJORITY)
    commented = comment_selectors.counts([row["p"].pk for row in disputed + undecided])
    for row in disputed + undecided:
        row["comments"] = commented.get(row["p"].pk, 0)
    context = {
        "project": project,
        "rows": disputed,
        "undecided": undecided,
        "extra_votes": adjudication.EXTRA_VOTES,
    }
    return render(request, "annotation/disputes.html", context)


@login_required
@require_POST
def adjudicate(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    perturbation = get_object_or_404(Perturbation, project=project, pk=pk)
    try:
        adjudication.perturbation_adjudicate(
            perturbation=perturbation, admin=request.user, decision=request.POST.get("decision", "")
        )
    except DomainError as error:
        flash_refusal(request, error)
    else:
        done = {"accept": "accepted", "reject": "rejected", "reopen": "reopened for more votes"}
        messages.success(request, f"Perturbation {pk}: {done[request.POST['decision']]}.")
    return redirect("disputes", slug=slug)
