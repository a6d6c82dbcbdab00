"""Project pages: the project list, a project's dashboard, and its members."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from annotation.errors import DomainError
from annotation.models import Perturbation, Vote
from annotation.permissions import Role, project_for, roles_of, visible_projects
from annotation.projects import services
from annotation.projects.forms import MemberForm
from annotation.validation.queue import items_left
from annotation.validation.stats import project_stats, tag_coverage


@login_required
def project_list(request: HttpRequest) -> HttpResponse:
    projects = visible_projects(request.user).annotate(n_examples=Count("examples"))
    rows = [(project, sorted(roles_of(request.user, project))) for project in projects]
    return render(request, "annotation/project_list.html", {"rows": rows})


@login_required
def project_dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug)
    counts = {
        (row["split"], row["label"]): row["n"]
        for row in project.examples.values("split", "label").annotate(n=Count("id"))
    }
    splits = sorted({split for split, _ in counts})
    table = [
        (split, [counts.get((split, label), 0) for label in project.labels]) for split in splits
    ]
    roles = project.user_roles  # type: ignore[attr-defined]
    user: Any = request.user
    is_admin = Role.ADMIN in roles
    # Blindness: outcome counts move when a vote resolves an item, so only admins see the
    # project's; everyone else sees their own work and progress.
    perturbations = project.perturbations.all()
    if not is_admin:
        perturbations = perturbations.filter(author=user)
    status_counts = dict(perturbations.values_list("status").annotate(n=Count("id")).order_by())
    tags = tag_coverage(project)
    if not is_admin:
        tags = [{k: v for k, v in tag.items() if k != "accepted"} for tag in tags]
    validation = None
    if Role.VALIDATOR in roles:
        votes = Vote.objects.filter(item__project=project, validator=user).count()
        validation = {"votes": votes, "left": items_left(project=project, validator=user)}
    context = {
        "project": project,
        "roles": roles,
        "is_admin": is_admin,
        "table": table,
        "n_examples": sum(counts.values()),
        "tags": tags,
        "guidelines": project.current_guidelines(),
        "perturbation_counts": [(s, status_counts.get(s, 0)) for s in Perturbation.Status.values],
        "n_perturbations": sum(status_counts.values()),
        "validation": validation,
        # Agreement figures and vote distributions are for admins only.
        "stats": project_stats(project) if is_admin else None,
    }
    return render(request, "annotation/dashboard.html", context)


@login_required
def members_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_for(request.user, slug, Role.ADMIN)
    form = MemberForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.member_set_roles(project=project, actor=request.user, **form.cleaned_data)
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, f"Roles of {form.cleaned_data['username']} saved.")
            return redirect("project-members", slug=project.slug)
    context = {"project": project, "form": form, "members": services.members_of(project)}
    return render(request, "annotation/members.html", context)
