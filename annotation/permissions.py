"""Role rules (docs/security.md): checked on the server for every endpoint and page.

A user without any role in a project sees nothing of it: 404, never 403. A member who lacks the
role an action needs gets 403. Django staff act as admins of every project.
"""

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from annotation.models import Membership, Project, Release
from annotation.sql import project_with_roles

Role = Membership.Role


def roles_of(user: Any, project: Project) -> set[str]:
    if not user.is_authenticated:
        return set()
    roles = Membership.objects.filter(project=project, user=user).values_list("role", flat=True)
    return _with_staff(user, set(roles))


def _with_staff(user: Any, roles: set[str]) -> set[str]:
    """Staff act as admins of every project."""
    return roles | {Role.ADMIN} if getattr(user, "is_staff", False) else roles


def project_for(user: Any, slug: str, *allowed: str) -> Project:
    """The project `slug` if `user` may act in it with one of the `allowed` roles (any if none)."""
    user_id = user.pk if user.is_authenticated else None
    project, members = project_with_roles(slug, user_id)
    held = _with_staff(user, members)
    if project is None or not held:
        raise Http404("No such project.")
    if allowed and not held.intersection(allowed):
        raise PermissionDenied(f"This needs the {' or '.join(allowed)} role in this project.")
    project.user_roles = held  # type: ignore[attr-defined]
    return project


def may_create_projects(user: Any) -> bool:
    """Creating a project makes its creator an admin of it, who may then register models: so
    only staff, and users granted `can_create_projects`, may."""
    return bool(user.is_authenticated) and (
        user.is_staff or user.has_perm("annotation.can_create_projects")
    )


def check_may_create_projects(user: Any) -> None:
    """Refuse (403, pages and API alike) a user who may not create projects."""
    if not may_create_projects(user):
        raise PermissionDenied("Only staff, or users granted can_create_projects, create projects.")


def visible_projects(user: Any) -> "QuerySet[Project]":
    if getattr(user, "is_staff", False):
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user).distinct()


def admin_release(user: Any, pk: int) -> Release:
    """A release, for admins of its project; 404 for everyone else."""
    release = get_object_or_404(Release.objects.select_related("project", "created_by"), pk=pk)
    if Role.ADMIN not in roles_of(user, release.project):
        raise Http404("No such release.")
    return release


def raw_field(request: Any, name: str) -> Any:
    """A value of the request's payload before validation, for the permission check that must
    come first (None when the payload is not an object)."""
    data = request.data
    return data.get(name) if hasattr(data, "get") else None
