"""The crowd's pages: the study link a participant arrives by (their start page), their
completion page and leaving; the admin's Studies page (study links, payments, the gold pool
and the comprehension questions) and its guide, read from docs/validation.md."""

import json
import posixpath
import re
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from annotation.crowd import gates, pool
from annotation.crowd.services import studies
from annotation.crowd.services.state import validate_state
from annotation.crowd.services.studies import PARTICIPANT
from annotation.downloads import download
from annotation.errors import DomainError
from annotation.models import Participant, Project, Study
from annotation.permissions import Role, project_for

BACKEND = "config.sso.PasswordBackend"  # settings.AUTHENTICATION_BACKENDS


@never_cache  # Back and Forward ask again: the start page's count is never stale
def study_enter(request: HttpRequest, slug: str, token: str) -> HttpResponse:
    """Where the platform sends a participant, with their id in the query: make or resume their
    account, sign them in to it, and show the study's start page (this address without the
    query, which their header's brand links to). Someone signed in to an account of their own
    is not switched; a session of another participant asks which one goes on (a POST of
    `switch` takes the new one)."""
    study = get_object_or_404(
        Study.objects.select_related("project"), project__slug=slug, token=token
    )
    context: dict[str, Any] = {"study": study, "project": study.project, "study_page": True}
    if request.GET.get("assignmentId") == studies.MTURK_PREVIEW:
        context.update(_intro(study), preview=True)
        return render(request, "annotation/study_enter.html", context)
    user: Any = request.user
    mark = request.session.get(PARTICIPANT) if user.is_authenticated else None
    if user.is_authenticated and not mark:
        context["signed_in"] = user.username
        return render(request, "annotation/study_enter.html", context, status=409)
    found = Participant.objects.select_related("study", "project", "user")
    current = found.filter(pk=mark["participant"], user_id=user.pk).first() if mark else None
    if current is not None and not any(k in request.GET for k in ("PROLIFIC_PID", "workerId")):
        if current.study.token != token:  # their own study's page
            return redirect("study-enter", slug=current.project.slug, token=current.study.token)
        return _start_page(request, current)
    try:
        arrival = studies.arrival_of(request.GET)
    except DomainError as error:
        context["error"] = error.message
        return render(request, "annotation/study_enter.html", context, status=error.status)
    same = current is not None and (current.project_id, current.external_id) == (
        study.project_id,
        arrival.external_id,
    )
    if current is not None and not same:
        if request.method != "POST" or request.POST.get("switch") != "1":
            context.update(current=current, arriving=arrival.external_id)
            return render(request, "annotation/study_enter.html", context, status=409)
        logout(request)
    address = request.META.get("CONTRASTLAB_CLIENT_ADDRESS", "")  # the edge's (config/edge.py)
    try:
        participant = studies.participant_arrive(study=study, arrival=arrival, address=address)
    except DomainError as error:  # the study full, too many new at once, or the id's name taken
        context["error"] = error.message
        return render(request, "annotation/study_enter.html", context, status=error.status)
    if request.user.pk != participant.user_id:
        login(request, participant.user, backend=BACKEND)
    request.session[PARTICIPANT] = {
        "project": slug,
        "participant": participant.pk,
        "token": participant.study.token,
        "external_id": participant.external_id,
    }
    return redirect("study-enter", slug=slug, token=participant.study.token)


def _start_page(request: HttpRequest, participant: Participant) -> HttpResponse:
    """What the task is, the guidelines, how many items and that some check the work; then
    Start (or Go on, for one who has begun). One who finished reads their code."""
    study, project = participant.study, participant.project
    crowd = validate_state(project=project, validator=request.user, session=request.session)
    if crowd.completed:
        return redirect("study-done", slug=project.slug, token=study.token)
    context = {"study": study, "project": project, **_intro(study), "done": crowd.done}
    return render(request, "annotation/study_start.html", context)


def _intro(study: Study) -> dict[str, Any]:
    project = study.project
    return {
        "guidelines": project.current_guidelines(),
        "labels": project.all_labels,
        "quiz_on": gates.quiz_on(project),
        "gold_on": project.setting("gold_rate") > 0,
        "lease_minutes": max(1, project.setting("lease_ttl") // 60),
    }


@require_POST
def study_leave(request: HttpRequest, slug: str, token: str) -> HttpResponse:
    """A participant leaves: signed out, and told how to come back (their link resumes)."""
    study = get_object_or_404(
        Study.objects.select_related("project"), project__slug=slug, token=token
    )
    participant = studies.participant_of(request, slug)
    if participant is not None:
        logout(request)
    context = {
        "study": study,
        "project": study.project,
        "study_page": True,
        "done": studies.items_done(participant) if participant is not None else None,
        "lease_minutes": max(1, study.project.setting("lease_ttl") // 60),
    }
    return render(request, "annotation/study_left.html", context)


@never_cache
def study_done(request: HttpRequest, slug: str, token: str) -> HttpResponse:
    """The participant's last page: their completion code and the platform's return link, or
    why their work ended."""
    project = get_object_or_404(Project, slug=slug)
    crowd = validate_state(project=project, validator=request.user, session=request.session)
    if crowd.participant is None or crowd.study_token != token:
        raise Http404("No such page.")
    study = crowd.participant.study
    code = study.ended_code if crowd.ended else study.completion_code if crowd.finished else ""
    context = {
        "study": study,
        "project": project,
        "code": code,
        "ran_out": crowd.finished and crowd.done < study.items_per_participant,
        "ended": crowd.ended_message,
        "return_link": studies.PROLIFIC_RETURN.format(code=code)
        if code and study.platform == Study.Platform.PROLIFIC
        else "",
    }
    return render(request, "annotation/study_done.html", context)


@login_required
def studies_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Study links, payments, the gold pool and the comprehension questions. The questions are
    a setting of the project, which its settings save (annotation.projects.views)."""
    project = project_for(request.user, slug, Role.ADMIN)
    if request.method == "POST":
        try:
            _studies_action(request, project)
        except DomainError as error:
            return studies_refused(request, project, error)
        return redirect("studies", slug=slug)
    return _studies_render(request, project, {}, 200)


def studies_refused(request: HttpRequest, project: Project, error: DomainError) -> HttpResponse:
    """The Studies page again, with what the admin typed in its form and why it was refused."""
    typed = {k: v for k, v in request.POST.items() if k != "csrfmiddlewaretoken"}
    typed["error"] = error.message
    return _studies_render(request, project, typed, error.status)


def _studies_render(
    request: HttpRequest, project: Project, typed: dict[str, Any], status: int
) -> HttpResponse:
    questions = project.setting("qualification_questions")
    context = {
        "project": project,
        "studies": studies.study_figures(project),
        "platforms": Study.Platform.choices,
        "pool_size": pool.pool_size(project),
        "questions": typed.get(
            "questions", "\n".join(json.dumps(_in_order(q), ensure_ascii=False) for q in questions)
        ),
        "has_questions": bool(questions),
        "typed": typed,
        "settings": {key: project.setting(key) for key in gates.GATE_SETTINGS},
        # The gates' form: what was typed, when refused; else the settings as they are.
        "gate_values": {
            key: typed.get(f"setting_{key}", project.setting(key)) for key in gates.GATE_SETTINGS
        },
    }
    return render(request, "annotation/studies.html", context, status=status)


def _studies_action(request: HttpRequest, project: Project) -> None:
    if "refresh_pool" in request.POST:
        messages.success(request, f"The gold pool holds {pool.pool_refresh(project)} items.")
    else:
        items = request.POST.get("items_per_participant", "").strip()
        if items and not items.isdigit():
            raise DomainError("items_per_participant is from 1 to 10000.")
        cap = request.POST.get("max_participants", "").strip()
        if cap and not (cap.isascii() and cap.isdigit()):
            raise DomainError("max_participants is a whole number, or empty for no cap.")
        study = studies.study_create(
            project=project,
            actor=request.user,
            name=request.POST.get("name", ""),
            platform=request.POST.get("platform", ""),
            items_per_participant=int(items) if items else None,
            completion_code=request.POST.get("completion_code", "").strip(),
            max_participants=int(cap) if cap else None,
        )
        messages.success(request, f"Study {study.name} created: paste its link below.")


def _in_order(question: dict[str, Any]) -> dict[str, Any]:
    """A question's keys in the order the page's help writes them (the database sorts them)."""
    return {k: question[k] for k in ("fields", "label", "answers") if k in question}


@login_required
def study_payments(request: HttpRequest, slug: str, pk: int) -> StreamingHttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    study = get_object_or_404(Study, project=project, pk=pk)
    return download(studies.payment_rows(study), "csv", f"{slug}-study-{pk}-payments")


GUIDE = ("validation.md", "## Validation with a crowd")


@login_required
def studies_guide(request: HttpRequest, slug: str) -> HttpResponse:
    """The crowd setup, step by step, as docs/validation.md has it (the one copy): the
    Studies page links here, as the docs are not served otherwise."""
    project = project_for(request.user, slug, Role.ADMIN)
    name, heading = GUIDE
    path = settings.BASE_DIR / "docs" / name
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    context = {"project": project, "guide": doc_section(text, heading), "source": f"docs/{name}"}
    return render(request, "annotation/studies_guide.html", context)


def doc_section(text: str, heading: str) -> str:
    """The Markdown under the heading that starts with `heading`, up to the next heading of its
    level, with links to other files of the repository written as their paths (not served)."""
    lines = text.splitlines()
    found = [n for n, line in enumerate(lines) if line.startswith(heading)]
    if not found:
        return ""
    start = found[0] + 1
    level = heading.split(" ")[0] + " "
    end = next((n for n in range(start, len(lines)) if lines[n].startswith(level)), len(lines))
    return LOCAL_LINK.sub(_as_path, "\n".join(lines[start:end]))


LOCAL_LINK = re.compile(r"\[([^\]]+)\]\((?!https?://|#)([^)\s]+)\)")


def _as_path(link: re.Match[str]) -> str:
    path = posixpath.normpath(f"docs/{link[2]}")
    return f"`{path}`" if link[1] in (path, link[2]) else f"{link[1]} (`{path}`)"
