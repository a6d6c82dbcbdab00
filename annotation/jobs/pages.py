"""The one cancel/retry page action of every kind of job (an import, a run, an analysis): the
kind's JobPages say where its jobs live, who may act on them and where to go after."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from annotation.errors import DomainError, flash_refusal
from annotation.models import Job, Project


@dataclass(frozen=True)
class JobPages:
    """What the shared job views (cancel and retry here; the progress of runs and analyses)
    need to know of a kind of job."""

    model: type[Job]
    project_path: str  # the lookup from a job to its project
    page: str  # the URL name of a job's page
    unit: str  # what its progress counts
    actions: Mapping[str, Callable[[Any], Any]]
    project_of: Callable[[Any, str], Project]  # the project, if the user may act on its jobs

    def find(self, request: HttpRequest, slug: str, pk: int) -> tuple[Project, Any]:
        """The project and its job `pk`; 404 (or the project's refusal) otherwise."""
        project = self.project_of(request.user, slug)
        return project, get_object_or_404(self.model, pk=pk, **{self.project_path: project})


@login_required
@require_POST
def job_action(
    request: HttpRequest, slug: str, pk: int, action: str, pages: JobPages
) -> HttpResponse:
    """Cancel or retry a job, then show its page again (a refusal flashed there)."""
    _, job = pages.find(request, slug, pk)
    act = pages.actions.get(action)
    if act is None:
        raise Http404("The actions are cancel and retry.")
    try:
        act(job)
    except DomainError as error:
        flash_refusal(request, error)
    return redirect(pages.page, slug=slug, pk=pk)
