"""Evaluation results are for admins only: everyone else gets 404, members included
(no model in the annotation loop)."""

from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404

from annotation.models import Project
from annotation.permissions import Role, roles_of, visible_projects
from evaluation.models import EvaluationRun, ModelSpec


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


def admin_model(user: Any, pk: int) -> ModelSpec:
    spec = get_object_or_404(ModelSpec.objects.select_related("project"), pk=pk)
    _check(user, spec.project)
    return spec
