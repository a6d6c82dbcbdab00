"""Adding people to a project from a pasted list or a CSV: existing accounts get the roles,
new ones are created without a password and get a one-time link to set one (Django's
password-reset tokens: the link stops working once the password is set)."""

import csv
import io
import re
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from celery import shared_task
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.db.models.functions import Lower
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotation.audit import audit
from annotation.errors import DomainError, ImportRejected
from annotation.imports.readers import LineError
from annotation.models import Membership, Project

User = get_user_model()
ROLES = tuple(Membership.Role.values)
USERNAME_RE = re.compile(r"^[\w.@+-]{1,150}$")
MAX_PEOPLE = 2000
HEADER = {"username", "email", "e-mail", "roles", "role"}


@dataclass
class Person:
    line: int
    username: str
    email: str
    roles: list[str] = field(default_factory=list)


def parse_people(text: str, default_roles: list[str]) -> list[Person]:
    """One person per line: a username, an e-mail, or both, and optionally roles, separated by
    commas (a CSV, with or without the header username,email,roles). Roles in a line replace
    the default ones. Every bad line is reported with its number."""
    rows = list(csv.reader(io.StringIO(text)))
    if rows and {cell.strip().lower() for cell in rows[0] if cell.strip()} <= HEADER:
        start, rows = 2, rows[1:]
    else:
        start = 1
    people, errors, seen = [], [], set()
    for number, row in enumerate(rows, start=start):
        cells = [cell.strip() for cell in row if cell.strip()]
        if not cells:
            continue
        try:
            person = _person(number, cells, default_roles)
        except DomainError as error:
            errors.append(LineError(number, error.message))
            continue
        if person.username.lower() in seen:
            errors.append(LineError(number, f"{person.username} is listed twice."))
        seen.add(person.username.lower())
        people.append(person)
    if len(people) > MAX_PEOPLE:
        errors.append(LineError(None, f"at most {MAX_PEOPLE} people at once."))
    if not people and not errors:
        errors.append(LineError(None, "the list is empty."))
    if errors:
        raise ImportRejected(errors)
    return people


def _is_email(cell: str) -> bool:
    if "@" not in cell or "." not in cell.rsplit("@", 1)[-1]:
        return False
    try:
        validate_email(cell)
    except ValidationError:
        raise DomainError(f"{cell!r} is not an e-mail address.") from None
    return True


def _person(number: int, cells: list[str], default_roles: list[str]) -> Person:
    """The first cell names the person (a username, or an e-mail), even a username such as
    "admin"; then an e-mail, and roles."""
    first, *rest = cells
    email = first if _is_email(first) else ""
    username = "" if email else first
    roles: list[str] = []
    for cell in rest:
        words = cell.replace(";", " ").split()
        if words and all(word.lower() in ROLES for word in words):
            roles += [word.lower() for word in words]
        elif not email and _is_email(cell):
            email = cell
        else:
            raise DomainError(f"{cell!r}: expected an e-mail or roles after {first!r}.")
    username = username or email.split("@")[0]
    if not USERNAME_RE.match(username):
        raise DomainError(
            f"username {username!r} may hold only letters, digits and @ . + - _ (150 at most)."
        )
    roles = sorted(set(roles or default_roles))
    if not roles:
        raise DomainError("no role: tick one above, or name one in the line (e.g. validator).")
    return Person(number, username, email, roles)


@transaction.atomic
def people_add(
    *, project: Project, actor: Any, people: list[Person], site: str
) -> list[dict[str, Any]]:
    """Give each person their roles (besides any they have), creating the accounts that do
    not exist. For a new account: a set-password link, also e-mailed when there is an address.
    `site` is the scheme and host the links start with."""
    # Case-insensitive, as people type names: "Alice" is the account "alice".
    named = User.objects.annotate(key=Lower("username"))
    existing = {u.key: u for u in named.filter(key__in=[p.username.lower() for p in people])}
    mailed = User.objects.annotate(key=Lower("email"))
    by_email = {u.key: u for u in mailed.filter(
        key__in=[p.email.lower() for p in people if p.email])}  # fmt: skip
    invites: list[list[Any]] = []
    results = []
    for person in people:
        user: Any = existing.get(person.username.lower()) or by_email.get(person.email.lower())
        created = user is None
        if created:
            user = User.objects.create_user(username=person.username, email=person.email)
            user.set_unusable_password()
            user.save(update_fields=["password"])
        have = set(
            Membership.objects.filter(project=project, user=user).values_list("role", flat=True)
        )
        Membership.objects.bulk_create(
            [Membership(project=project, user=user, role=r) for r in person.roles if r not in have]
        )
        link = set_password_link(user, site) if created else ""
        if link and person.email:
            invites.append([user.pk, link])
        results.append({"username": user.username, "email": user.email, "roles": person.roles,
                        "created": created, "link": link})  # fmt: skip
    audit(actor=actor, action="members_added", project=project,
          usernames=[r["username"] for r in results],
          created=[r["username"] for r in results if r["created"]])  # fmt: skip
    if invites:  # sent by a worker, after the commit: not 2,000 e-mails inside the request
        transaction.on_commit(partial(send_invites_task.delay, project.pk, invites))
    return results


def set_password_link(user: Any, site: str) -> str:
    """Django's password-reset link: valid once, until PASSWORD_RESET_TIMEOUT."""
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    return site + reverse("password-set", kwargs={"uidb64": uid, "token": token})


@shared_task(name="annotation.tasks.send_invites")  # routed with the imports
def send_invites_task(project_id: int, invites: list[list[Any]]) -> None:
    """E-mail each new account its set-password link, on a worker."""
    project = Project.objects.get(pk=project_id)
    users = User.objects.in_bulk([int(user_id) for user_id, _ in invites])
    for user_id, link in invites:
        if int(user_id) in users:
            _send_invite(project, users[int(user_id)], str(link))


def _send_invite(project: Project, user: Any, link: str) -> None:
    send_mail(
        f"You are invited to {project.name} on ContrastLab",
        f"Hello {user.username},\n\nYou have been added to the project {project.name}. "
        f"Choose your password here (the link works once):\n\n{link}\n\n"
        f"Your username is {user.username}.\n",
        None,
        [user.email],
    )
