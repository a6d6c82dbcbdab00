"""Project pages: the project list, a project's dashboard, its settings (the Studies page's
comprehension questions among them) and its members."""

import json
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import SetPasswordForm
from django.contrib.auth.views import redirect_to_login
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.crowd import gates
from annotation.crowd import views as crowd_views
from annotation.errors import DomainError, ImportRejected
from annotation.models import Perturbation, Project, Tag, Vote
from annotation.pagination import table_page
from annotation.permissions import (
    Role,
    check_may_create_projects,
    may_create_projects,
    project_for,
    roles_of,
    visible_projects,
)
from annotation.projects import services
from annotation.projects.forms import (
    TASK_NAMES,
    FieldFormSet,
    GatesForm,
    MemberForm,
    PeopleForm,
    ProjectForm,
    TagFormSet,
    field_values,
    tag_values,
    template_values,
)
from annotation.projects.services import invites
from annotation.validation.services.queue import items_left
from annotation.validation.stats import project_stats, tag_coverage

# Where each role starts in a project (README, "Where each role starts"), the first that
# the user holds.
STARTS = (("admin", "project-dashboard"), ("expert", "pivots"), ("validator", "validate"))


def start_of(roles: Any) -> str:
    return next((page for role, page in STARTS if role in roles), "project-dashboard")


@login_required
def project_list(request: HttpRequest) -> HttpResponse:
    projects = visible_projects(request.user).annotate(n_examples=Count("examples"))
    rows = [
        (project, roles, start_of(roles))
        for project in projects
        for roles in [sorted(roles_of(request.user, project))]
    ]
    context = {
        "rows": rows,
        "may_create": may_create_projects(request.user),
        # the Results table (evaluation) spans the projects one administers
        "administers": any("admin" in roles for _, roles, _ in rows),
    }
    return render(request, "annotation/project_list.html", context)


@login_required
def project_start(request: HttpRequest) -> HttpResponse:
    """Where logging in leads: in one's only project, where one's role starts (an expert on
    Pivots, a validator on Validate, an admin on the dashboard); else the project list, whose
    links lead there."""
    projects = list(visible_projects(request.user)[:2])
    if len(projects) != 1 or request.user.is_staff:
        return redirect("project-list")
    project = projects[0]
    return redirect(start_of(roles_of(request.user, project)), slug=project.slug)


@login_required
def project_new(request: HttpRequest) -> HttpResponse:
    """A new project, from the template of a task type (?template=...), changed at will."""
    check_may_create_projects(request.user)
    chosen = request.GET.get("template", "classification")
    values = template_values(chosen if chosen in TASK_NAMES else "classification")
    return _setup(request, None, values)


@login_required
def project_settings(request: HttpRequest, slug: str) -> HttpResponse:
    """Everything a project is, with the rules of the API (task type fixed once examples
    exist)."""
    project = project_for(request.user, slug, Role.ADMIN)
    current = project.current_guidelines()
    values = {
        "name": project.name,
        "task_type": project.task_type,
        "fields": project.fields,
        "labels": project.labels,
        "extra_labels": project.extra_labels,
        "tags": [
            {"name": t.name, "description": t.description, "target": t.target}
            for t in project.tags.all()
        ],
        "guidelines": current.text if current else "",
        "settings": project.settings,
    }
    return _setup(request, project, values)


def _setup(request: HttpRequest, project: Project | None, values: dict[str, Any]) -> HttpResponse:
    data = request.POST if request.method == "POST" else None
    form = ProjectForm(data, project=project, initial=ProjectForm.initial_for(values))
    # Posted rows count against blanks, not the page's first values: each one is read.
    fields = FieldFormSet(data, prefix="field", initial=None if data else values["fields"])
    tags = TagFormSet(data, prefix="tag", initial=None if data else values["tags"])
    preview = None
    valid = data is not None and all([form.is_valid(), fields.is_valid(), tags.is_valid()])
    if valid and "preview" in request.POST:
        preview = form.cleaned_data["guidelines"]
    elif valid:
        changes = {
            "name": form.cleaned_data["name"],
            "fields": field_values(fields),
            "labels": form.cleaned_data["labels"],
            "extra_labels": form.cleaned_data["extra_labels"],
            "tags": tag_values(tags),
            "guidelines": form.cleaned_data["guidelines"],
            "settings": form.settings(),
            "task_type": form.cleaned_data["task_type"],
        }
        try:
            if project is None:
                slug = form.cleaned_data["slug"]
                if Project.objects.filter(slug=slug).exists():
                    raise DomainError(f"a project with the slug {slug!r} exists.")
                project = services.project_create(user=request.user, slug=slug, **changes)
                messages.success(request, f"Project {project.name} created. Import its originals.")
                return redirect("project-import", slug=project.slug)
            services.project_update(project=project, user=request.user, **changes)
            pool = gates.pool_for_gates(project)
        except DomainError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            filled = "" if pool is None else f" The gold pool holds {pool} items (Studies)."
            messages.success(request, f"Project saved.{filled}")
            return redirect("project-settings", slug=project.slug)
    context = {
        "project": project,
        "form": form,
        "fields": fields,
        "tags": tags,
        "preview": preview,
        "tag_keys": Tag.KEYS,
        "templates": TASK_NAMES.items(),
        "chosen": values["task_type"],
    }
    return render(request, "annotation/project_settings.html", context)


@login_required
@require_POST
def project_questions(request: HttpRequest, slug: str) -> HttpResponse:
    """The Studies page's comprehension questions, one JSON object a line, saved as the setting
    they are; with a gate on, the gold pool is filled at once. Refused, the Studies page shows
    again with what was typed and why."""
    project = project_for(request.user, slug, Role.ADMIN)
    try:
        questions = _questions(request.POST.get("questions", ""))
        services.project_update(
            project=project, user=request.user, settings={"qualification_questions": questions}
        )
        size = gates.pool_for_gates(project)
    except DomainError as error:
        return crowd_views.studies_refused(request, project, error)
    filled = f" The gold pool holds {size} items." if size is not None else ""
    messages.success(request, f"{len(questions)} comprehension questions saved.{filled}")
    return redirect("studies", slug=slug)


@login_required
@require_POST
def project_gates(request: HttpRequest, slug: str) -> HttpResponse:
    """The Studies page's gates, saved as the settings they are (Settings shows the same); with
    a gate on, the gold pool is filled at once. Refused, the Studies page shows again."""
    project = project_for(request.user, slug, Role.ADMIN)
    form = GatesForm(request.POST)
    try:
        if not form.is_valid():
            raise DomainError(form.refusal())
        services.project_update(project=project, user=request.user, settings=form.settings())
        size = gates.pool_for_gates(project)
    except DomainError as error:
        return crowd_views.studies_refused(request, project, error)
    filled = f" The gold pool holds {size} items." if size is not None else ""
    messages.success(request, f"The gates are saved.{filled}")
    return redirect("studies", slug=slug)


def _questions(text: str) -> list[Any]:
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError as error:
        raise DomainError(f"Each line must be one JSON object: {error}.") from None


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
    if project.is_free_text:  # per split: originals, and those that wait for their answer
        waiting = dict(
            project.examples.filter(label="", answers=[])
            .values_list("split")
            .annotate(n=Count("id"))
            .order_by()
        )
        per_split = {s: sum(n for (s2, _), n in counts.items() if s2 == s) for s in splits}
        table = [(s, [per_split[s], waiting.get(s, 0)]) for s in splits]
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
        "n_waiting": sum(row[1][1] for row in table) if project.is_free_text else 0,
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
    """Who is in the project with which roles (searchable, sortable, paginated); adding many
    people at once, new accounts with a one-time set-password link; one user's roles."""
    project = project_for(request.user, slug, Role.ADMIN)
    form = MemberForm(request.POST if "username" in request.POST else None)
    people = PeopleForm(request.POST if "people" in request.POST else None, request.FILES or None)
    added, errors = [], []
    if "revoke" in request.POST:
        try:
            revoked = invites.invitation_revoke(
                project=project, actor=request.user, invitation_id=_int(request.POST["revoke"])
            )
        except DomainError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, f"The invitation of {revoked.email} is withdrawn.")
        return redirect("project-members", slug=project.slug)
    if form.is_bound and form.is_valid():
        try:
            services.member_set_roles(project=project, actor=request.user, **form.cleaned_data)
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, f"Roles of {form.cleaned_data['username']} saved.")
            return redirect("project-members", slug=project.slug)
    if people.is_bound and people.is_valid():
        try:
            parsed = invites.parse_people(people.text(), people.cleaned_data["roles"])
            site = f"{request.scheme}://{request.get_host()}"
            added = invites.people_add(
                project=project, actor=request.user, people=parsed, site=site
            )
        except ImportRejected as rejected:
            errors = rejected.errors
        else:
            people = PeopleForm()  # added: an empty box, so that a second click adds nobody
    rows = services.members_of(project, request.user)
    context = {
        "project": project,
        "form": form,
        "people": people,
        "added": added,
        "sso_only": settings.PASSWORD_LOGIN == "staff" and settings.OIDC_PROVIDER_NAME,
        "mails": settings.EMAIL_BACKEND != NO_MAIL,
        "errors": errors,
        "n_members": len(rows),
        "invitations": invites.invitations_pending(project),
        **table_page(
            request,
            rows,
            sorts=("username", "roles_text", "email"),
            search=("username", "email", "roles"),
        ),
    }
    status = 400 if errors or (people.is_bound and people.errors) else 200
    return render(request, "annotation/members.html", context, status=status)


NO_MAIL = "django.core.mail.backends.dummy.EmailBackend"  # the default: nothing is sent
USED = "This invitation has been used already: ask the project's admin for another."
ANOTHER_ACCOUNT = (
    "This invitation is for another account: sign out, and sign in as the account whose "
    "address it was sent to."
)


def join_page(request: HttpRequest, slug: str, token: str) -> HttpResponse:
    """An invitation's link (annotation/projects/services/invites.py), good once: the account that
    this invitation created chooses its password here and is a member; any other account,
    signed in as itself with the address invited, accepts the roles."""
    project = get_object_or_404(Project, slug=slug)
    try:
        invitation = invites.invitation_read(project, token)
    except DomainError as error:
        return _join_problem(request, error.message, 400)
    context = {"project": project, "roles": invitation.roles}
    if invitation.used_at:
        if request.user.pk == invitation.used_by_id and set(invitation.roles) <= roles_of(
            request.user, project
        ):
            return render(request, "annotation/join.html", {**context, "member": True})
        return _join_problem(request, USED, 410)
    if settings.OIDC_ISSUER:  # signing in through the provider accepts it (config/sso.py)
        context.update(sso=settings.OIDC_PROVIDER_NAME, address=invitation.email)
    context["passwords"] = passwords = settings.PASSWORD_LOGIN == "everyone"
    if invitation.may_set_password() and passwords:  # its own new account: a password, then in
        account: Any = invitation.account
        form = SetPasswordForm(account, request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                invites.invitation_accept(
                    invitation=invitation, user=account, password=form.cleaned_data["new_password1"]
                )
            except DomainError as error:  # used at the same moment by another request
                return _join_problem(request, error.message, 409)
            login(request, account, backend="config.sso.PasswordBackend")
            messages.success(request, f"Your password is set, and you joined {project.name}.")
            return redirect("project-dashboard", slug=project.slug)
        return render(request, "annotation/join.html", {**context, "form": form})
    if not request.user.is_authenticated:
        if "sso" in context:
            return render(request, "annotation/join.html", {**context, "sign_in": True})
        return redirect_to_login(request.get_full_path())
    if (request.user.email or "").lower() != invitation.email:
        return _join_problem(request, ANOTHER_ACCOUNT, 403)
    if request.method == "POST":
        try:
            invites.invitation_accept(invitation=invitation, user=request.user)
        except DomainError as error:
            return _join_problem(request, error.message, 409)
        messages.success(request, f"You joined {project.name}.")
        return redirect("project-dashboard", slug=project.slug)
    return render(request, "annotation/join.html", context)


def _int(value: str) -> int:
    return int(value) if value.isascii() and value.isdigit() else 0


def _join_problem(request: HttpRequest, problem: str, status: int) -> HttpResponse:
    return render(request, "annotation/join.html", {"problem": problem}, status=status)
