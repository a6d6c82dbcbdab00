"""Project workflows: creating and changing projects, guidelines and members."""

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import is_password_usable
from django.db import transaction
from django.db.models import Max

from annotation.errors import DomainError
from annotation.models import AuditLog, Guidelines, Membership, Project, Tag
from annotation.models.config import (
    MAX_TAG_TARGET,
    check_minimal_pair,
    check_questions,
    clean_fields,
    clean_labels,
    clean_settings,
    default_edit_limit,
)
from annotation.projects.services import invites
from annotation.prompting import check_prompting

User = get_user_model()


def _clean_tags(tags: Any) -> list[dict[str, Any]]:
    if not isinstance(tags, list):
        raise DomainError("tags must be a list of {name, description, target}.")
    cleaned, seen = [], set()
    for tag in tags:
        if not isinstance(tag, dict) or not str(tag.get("name", "")).strip():
            raise DomainError("every tag needs a name.")
        name = str(tag["name"]).strip()
        if name in seen:
            raise DomainError(f"tag {name!r} appears twice.")
        target = tag.get("target")
        if target is not None and (
            not isinstance(target, int)
            or isinstance(target, bool)
            or not 0 <= target <= MAX_TAG_TARGET
        ):
            raise DomainError(
                f"tag {name!r}: target must be an integer from 0 to {MAX_TAG_TARGET}."
            )
        seen.add(name)
        row = {"name": name, "description": str(tag.get("description", "")), "target": target}
        if "example_edits" in tag:  # a tag's examples stay when a page's form leaves them out
            row["example_edits"] = tag["example_edits"]
        cleaned.append(row)
    return cleaned


def _set_tags(project: Project, tags: list[dict[str, Any]]) -> None:
    keep = [tag["name"] for tag in tags]
    project.tags.exclude(name__in=keep).delete()
    for position, tag in enumerate(tags):
        Tag.objects.update_or_create(
            project=project, name=tag["name"], defaults={**tag, "position": position}
        )


@transaction.atomic
def tag_create(*, project: Project, user: Any, name: str, description: str = "") -> Tag:
    """One tag added to the taxonomy (an expert's, from the editor), at its end; logged."""
    name = " ".join(str(name).split())
    if not name or len(name) > 64:
        raise DomainError("A tag needs a name of at most 64 characters.", field="name")
    if project.tags.filter(name__iexact=name).exists():
        raise DomainError(f"The project has a tag {name!r} already.", field="name")
    last = project.tags.aggregate(m=Max("position"))["m"]
    tag = Tag.objects.create(
        project=project,
        name=name,
        description=str(description)[:1000],
        position=0 if last is None else last + 1,
    )
    AuditLog.record(actor=user, action="tags_changed", project=project, added=[name])
    return tag


def guidelines_publish(*, project: Project, text: str, user: Any = None) -> Guidelines | None:
    """Store `text` as the next guidelines version, unless it equals the current one. Line
    endings are read as one: a browser's text box sends CRLF, and the same text saved again
    from the Settings page is not a change."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    current = project.current_guidelines()
    if current is not None and current.text == text:
        return None
    version = (current.version if current else 0) + 1
    if user is not None and not user.is_authenticated:
        user = None
    return Guidelines.objects.create(project=project, version=version, text=text, created_by=user)


def project_rules(
    *,
    task_type: Any,
    fields: Any,
    labels: Any,
    extra_labels: Any,
    settings: Any,
    before: Project | None = None,
) -> dict[str, Any]:
    """Every rule of a project's configuration, for the API, the pages and the Django admin:
    the cleaned values, or a DomainError. `before` is the project being changed; once it has
    examples, its task type and fields are fixed and labels may only be added at the end."""
    if task_type not in Project.TaskType.values:
        raise DomainError(f"task_type must be one of {', '.join(Project.TaskType.values)}.")
    free_text = task_type == Project.TaskType.FREE_TEXT
    if not isinstance(labels, list) or not isinstance(extra_labels, list):
        raise DomainError("labels and extra_labels must be lists of non-empty strings.")
    labels, extra = clean_labels(labels, extra_labels, free_text)
    fields = clean_fields(fields)
    if before is not None and before.pk is not None and before.examples.exists():
        if task_type != before.task_type:
            raise DomainError("task_type cannot change once examples are imported.")
        if fields != before.fields:
            raise DomainError("fields cannot change once examples are imported.")
        if labels[: len(before.labels)] != before.labels:
            raise DomainError("once examples are imported, labels can only be added at the end.")
    if task_type == Project.TaskType.MINIMAL_PAIR:
        check_minimal_pair(fields, labels)
    settings = clean_settings(settings)
    names = [f["name"] for f in fields]
    if settings["em_by_field"] not in ("", *names):
        raise DomainError(f"em_by_field must be one of the fields ({', '.join(names)}), or empty.")
    check_prompting(task_type, settings, [f["name"] for f in fields], labels)
    check_questions(settings["qualification_questions"], names, labels + extra)
    return {
        "task_type": task_type,
        "fields": fields,
        "labels": labels,
        "extra_labels": extra,
        "settings": settings,
    }


@transaction.atomic
def project_create(
    *,
    user: Any,
    name: str,
    slug: str,
    fields: Any,
    labels: Any,
    task_type: str = Project.TaskType.CLASSIFICATION,
    extra_labels: Any = (),
    tags: Any = (),
    guidelines: str = "",
    settings: Any = None,
) -> Project:
    values = project_rules(
        task_type=task_type,
        fields=fields,
        labels=list(labels),
        extra_labels=list(extra_labels),
        settings=settings,
    )
    if "max_edit_ratio" not in (settings or {}):  # none stated: the editable fields' default
        limit = default_edit_limit(values["task_type"], values["fields"])
        values["settings"]["max_edit_ratio"] = limit
    cleaned_tags = _clean_tags(list(tags))
    Project.check_name_free(name)
    project = Project.objects.create(name=name, slug=slug, **values)
    _set_tags(project, cleaned_tags)
    guidelines_publish(project=project, text=guidelines, user=user)
    if user is not None and user.is_authenticated:
        Membership.objects.create(project=project, user=user, role=Membership.Role.ADMIN)
    AuditLog.record(actor=user, action="project_created", project=project, slug=slug)
    return project


@transaction.atomic
def project_update(*, project: Project, user: Any, **changes: Any) -> Project:
    """Change what `changes` names; the project object changes only when every rule holds."""
    values = project_rules(
        task_type=changes.get("task_type", project.task_type),
        fields=changes.get("fields", project.fields),
        labels=list(changes.get("labels", project.labels)),
        extra_labels=list(changes.get("extra_labels", project.extra_labels)),
        settings={**project.settings, **(changes.get("settings") or {})},
        before=project,
    )
    cleaned_tags = _clean_tags(list(changes["tags"])) if "tags" in changes else None
    before = _snapshot(project)
    for attribute, value in values.items():
        setattr(project, attribute, value)
    if "name" in changes:
        Project.check_name_free(changes["name"], other_than=project)
        project.name = changes["name"]
    project.save()
    if cleaned_tags is not None:
        _set_tags(project, cleaned_tags)
    if "guidelines" in changes:
        guidelines_publish(project=project, text=changes["guidelines"], user=user)
    _record_update(project, user, before, _snapshot(project))
    return project


def _snapshot(project: Project) -> dict[str, Any]:
    tags = project.tags.values_list("name", "description", "target", "example_edits")
    guidelines = project.current_guidelines()
    return {
        "guidelines": guidelines.text if guidelines else "",
        "guidelines_version": guidelines.version if guidelines else 0,
        "name": project.name,
        "task_type": project.task_type,
        "fields": project.fields,
        "labels": project.labels,
        "extra_labels": project.extra_labels,
        "settings": dict(project.settings),
        "tags": {t[0]: t[1:] for t in tags},
    }


def _record_update(
    project: Project, user: Any, before: dict[str, Any], after: dict[str, Any]
) -> None:
    """One audit entry saying what changed, from what, to what; nothing when nothing did: a
    change of the tags alone is `tags_changed` (added, removed, edited), any other
    `project_updated` ({"from": ..., "to": ...} for each value changed, a setting's under
    `settings`, the guidelines as their versions)."""
    changed = [key for key in before if key != "guidelines_version" and before[key] != after[key]]
    if not changed:
        return
    details: dict[str, Any] = {}
    for key in changed:
        if key == "settings":
            old, new = before["settings"], after["settings"]
            details["settings"] = {
                k: {"from": old.get(k), "to": new.get(k)}
                for k in sorted(old.keys() | new.keys())
                if old.get(k) != new.get(k)
            }
        elif key == "tags":
            old, new = before["tags"], after["tags"]
            details["added"] = [name for name in new if name not in old]
            details["removed"] = [name for name in old if name not in new]
            details["edited"] = [name for name in new if name in old and old[name] != new[name]]
        else:
            details[key] = {"from": _worded(key, before), "to": _worded(key, after)}
    details = {k: v for k, v in details.items() if v}
    action = "tags_changed" if changed == ["tags"] else "project_updated"
    AuditLog.record(actor=user, action=action, project=project, **details)


def _worded(key: str, snapshot: dict[str, Any]) -> Any:
    """A snapshot's value as the audit log keeps it: the guidelines by version, each field as
    its name, kind and whether experts edit it."""
    if key == "guidelines":
        return f"version {snapshot['guidelines_version']}" if snapshot["guidelines"] else "none"
    if key == "fields":
        return [
            f"{f['name']} ({f.get('kind', 'text')}{', editable' if f.get('editable') else ''})"
            for f in snapshot["fields"]
        ]
    return snapshot[key]


@transaction.atomic
def member_set_roles(*, project: Project, actor: Any, username: str, roles: list[str]) -> Any:
    """Give `username` exactly `roles` in `project` (an empty list removes them)."""
    unknown = sorted(set(roles) - set(Membership.Role.values))
    if unknown:
        raise DomainError(f"unknown roles: {', '.join(unknown)}.")
    user = User.objects.filter(username=username).first()
    if user is None:
        raise DomainError(f"no user named {username!r}.")
    before = set(
        Membership.objects.filter(project=project, user=user).values_list("role", flat=True)
    )
    after = set(roles)
    if after - before:
        invites.check_may_join(project, user, username)
    if user == actor and Membership.Role.ADMIN in before - after and not actor.is_staff:
        raise DomainError("you cannot remove your own admin role.")
    Membership.objects.filter(project=project, user=user, role__in=before - after).delete()
    Membership.objects.bulk_create(
        [Membership(project=project, user=user, role=role) for role in sorted(after - before)]
    )
    if before != after:
        AuditLog.record(
            actor=actor,
            action="roles_changed",
            project=project,
            username=username,
            before=sorted(before),
            after=sorted(after),
        )
    return user


def members_of(project: Project, viewer: Any) -> list[dict[str, Any]]:
    """Each member: username, e-mail, roles (a list, and as text to sort by), and whether
    they have yet to sign in (no password, and never signed in: one who signs in through the
    provider has no password). Accounts' e-mails are shown to staff only: a project
    admin who adds an existing account by its username learns no more than its username."""
    people: dict[str, dict[str, Any]] = {}
    rows = Membership.objects.filter(project=project).values_list(
        "user__username", "user__email", "user__password", "user__last_login", "role"
    )
    for username, email, password, last_login, role in rows:
        person = people.setdefault(
            username,
            {
                "username": username,
                "email": email if viewer.is_staff else "",
                "roles": [],
                "invited": not is_password_usable(password) and last_login is None,
            },
        )
        person["roles"].append(role)
    for person in people.values():
        person["roles"].sort()
        person["roles_text"] = ", ".join(person["roles"])
    return sorted(people.values(), key=lambda p: p["username"])
