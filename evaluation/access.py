"""Evaluation results are for admins only: everyone else gets 404, members included
(no model in the annotation loop)."""

from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404

from annotation.errors import DomainError
from annotation.models import Project
from annotation.permissions import Role, admin_release, roles_of, visible_projects
from annotation.text.parsing import parse_id
from evaluation.models import Analysis, EvaluationRun, ModelSpec


def admin_project(user: Any, slug: str) -> Project:
    project = get_object_or_404(Project, slug=slug)
    if Role.ADMIN not in roles_of(user, project):
        raise Http404("No such project.")
    project.user_roles = roles_of(user, project)  # type: ignore[attr-defined]
    return project


def admin_projects(user: Any) -> list[Project]:
    return [p for p in visible_projects(user) if Role.ADMIN in roles_of(user, p)]


def require_some_admin(user: Any) -> None:
    """404 for users who administer no project: evaluation does not exist for them."""
    if not admin_projects(user):
        raise Http404("Not found.")


def _check(user: Any, project: Project) -> None:
    if Role.ADMIN not in roles_of(user, project):
        raise Http404("Not found.")


def admin_run(user: Any, pk: int) -> EvaluationRun:
    run = get_object_or_404(
        EvaluationRun.objects.select_related("release__project", "model"), pk=pk
    )
    _check(user, run.release.project)
    return run


def admin_analysis(user: Any, pk: int) -> Analysis:
    analysis = get_object_or_404(Analysis.objects.select_related("project"), pk=pk)
    _check(user, analysis.project)
    return analysis


def analysis_project(user: Any, release: Any, runs: Any) -> Project:
    """The project an analysis request is about, from its release or its first run; 404 unless
    `user` administers it."""
    if release is not None:
        return admin_release(user, parse_id(release) or 0).project
    if isinstance(runs, list) and runs:
        return admin_run(user, parse_id(runs[0]) or 0).release.project
    raise DomainError("Name the release (artifacts, inoculation) or the runs (instability).")


def admin_model(user: Any, pk: int) -> ModelSpec:
    spec = get_object_or_404(ModelSpec.objects.select_related("project"), pk=pk)
    _check(user, spec.project)
    return spec
