"""The crowd's pages: the study link a participant arrives by, their completion page, and the
admin's Studies page (study links, payments, the gold pool and the comprehension questions)."""

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone

from annotation.crowd import gates, pool, studies
from annotation.crowd.studies import PARTICIPANT
from annotation.downloads import download
from annotation.errors import DomainError, flash_refusal
from annotation.models import GoldAnswer, Participant, Project, Study
from annotation.permissions import Role, project_for
from annotation.projects import services

BACKEND = "django.contrib.auth.backends.ModelBackend"


def study_enter(request: HttpRequest, slug: str, token: str) -> HttpResponse:
    """Where the platform sends a participant: make or resume their account, sign them in to
    it, and start their items. Someone signed in to an account of their own is not switched."""
    study = get_object_or_404(
        Study.objects.select_related("project"), project__slug=slug, token=token
    )
    context: dict[str, Any] = {"study": study, "project": study.project}
    if request.GET.get("assignmentId") == studies.MTURK_PREVIEW:
        return render(request, "annotation/study_enter.html", {**context, "preview": True})
    user: Any = request.user
    if user.is_authenticated and not request.session.get(PARTICIPANT):
        context["signed_in"] = user.username
        return render(request, "annotation/study_enter.html", context, status=409)
    try:
        arrival = studies.arrival_of(request.GET)
        participant = studies.participant_arrive(study=study, arrival=arrival)
    except DomainError as error:
        context["error"] = error.message
        return render(request, "annotation/study_enter.html", context, status=error.status)
    if user.pk != participant.user_id:
        login(request, participant.user, backend=BACKEND)
    request.session[PARTICIPANT] = {"project": slug, "participant": participant.pk}
    return redirect("validate", slug=slug)


def study_done(request: HttpRequest, slug: str, token: str) -> HttpResponse:
    """The participant's last page: their completion code and the platform's return link, or
    why their work ended."""
    participant = studies.participant_of(request, slug)
    if participant is None or participant.study.token != token:
        raise Http404("No such page.")
    study = participant.study
    ended = gates.ended(participant.project, participant.user)
    finished = studies.participant_finished(participant)
    code = study.ended_code if ended else study.completion_code if finished else ""
    context = {
        "study": study,
        "project": participant.project,
        "code": code,
        "ran_out": finished and studies.items_done(participant) < study.items_per_participant,
        "ended": gates.ENDED.get(ended, ""),
        "return_link": studies.PROLIFIC_RETURN.format(code=code)
        if code and study.platform == Study.Platform.PROLIFIC
        else "",
    }
    return render(request, "annotation/study_done.html", context)


@login_required
def studies_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    if request.method == "POST":
        _studies_action(request, project)
        return redirect("studies", slug=slug)
    questions = project.setting("qualification_questions")
    context = {
        "project": project,
        "studies": studies.study_figures(project),
        "platforms": Study.Platform.choices,
        "pool_size": _pool_size(project),
        "questions": "\n".join(json.dumps(q, ensure_ascii=False) for q in questions),
        "settings": {key: project.setting(key) for key in CROWD_SETTINGS},
    }
    return render(request, "annotation/studies.html", context)


def _pool_size(project: Project) -> int:
    """The gold pool's size; an empty pool under the gates is filled first, from the labelled
    originals and accepted items (as the first test drawn would fill it)."""
    size = pool.pool_size(project)
    if size == 0 and gates.gates_on(project):
        size = pool.pool_refresh(project)
    return size


CROWD_SETTINGS = (
    "qualification_items",
    "qualification_min_accuracy",
    "qualification_attempts",
    "gold_rate",
    "gold_min_accuracy",
    "gold_min_count",
    "items_per_participant",
    "lease_ttl",
)


def _studies_action(request: HttpRequest, project: Project) -> None:
    try:
        if "refresh_pool" in request.POST:
            size = pool.pool_refresh(project)
            messages.success(request, f"The gold pool holds {size} items.")
        elif "questions" in request.POST:
            questions = _questions(request.POST["questions"])
            services.project_update(
                project=project, user=request.user, settings={"qualification_questions": questions}
            )
            messages.success(request, f"{len(questions)} comprehension questions saved.")
        else:
            items = request.POST.get("items_per_participant", "").strip()
            study = studies.study_create(
                project=project,
                actor=request.user,
                name=request.POST.get("name", ""),
                platform=request.POST.get("platform", ""),
                items_per_participant=int(items) if items.isdigit() else None,
                completion_code=request.POST.get("completion_code", "").strip(),
            )
            messages.success(request, f"Study {study.name} created: paste its link below.")
    except DomainError as error:
        flash_refusal(request, error)


def _questions(text: str) -> list[Any]:
    """One JSON object per line."""
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError as error:
        raise DomainError(f"Each line must be one JSON object: {error}.") from None


@login_required
def study_payments(request: HttpRequest, slug: str, pk: int) -> StreamingHttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    study = get_object_or_404(Study, project=project, pk=pk)
    return download(studies.payment_rows(study), "csv", f"{slug}-study-{pk}-payments")


def validate_gate(request: HttpRequest, project: Project) -> HttpResponse | None:
    """Before the Validate page serves an item: a participant who has labelled their items,
    or whose work the gates ended, goes to their completion page."""
    participant = studies.participant_of(request, project.slug)
    if participant is None:
        return None
    if studies.participant_finished(participant) or gates.ended(project, request.user):
        return redirect("study-done", slug=project.slug, token=participant.study.token)
    return None


def validate_context(request: HttpRequest, project: Project, context: dict[str, Any]) -> Any:
    """The Validate page under the gates: a gold item answered counts as an item done, and
    nothing moves only for real items (no "left" count, no undo), so that the page never tells
    them apart; a validator whose work ended reads why. A participant with nothing left to
    label has finished."""
    participant = studies.participant_of(request, project.slug)
    if participant is not None:
        context["of_items"] = participant.study.items_per_participant
    if context["item"] is None and participant is not None:
        Participant.objects.filter(pk=participant.pk, completed_at=None).update(
            completed_at=timezone.now()
        )
        return redirect("study-done", slug=project.slug, token=participant.study.token)
    if context["item"] is None:
        context["ended"] = gates.ENDED.get(gates.ended(project, request.user), "")
    if not gates.gates_on(project):
        return None
    user: Any = request.user
    context["done"] += GoldAnswer.objects.filter(project=project, validator=user).count()
    context["left"] = None
    context["undoable"] = None
    context["gated"] = True
    return None
