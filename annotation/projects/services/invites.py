"""Adding people to a project from a pasted list or a CSV.

A person named by a username: an existing account gets the roles; a new one is created
without a password and gets a one-time link to set one (Django's password-reset tokens: the
link stops working once the password is set).

A person named by an e-mail alone gets an invitation link whether or not an account has that
address, and joins the project only when they accept it, so that the admin learns nothing
they did not type (neither whether an account exists, nor its username). The link works once,
can be withdrawn, and may choose a password only for the account that this same invitation
created, before anyone has signed in to it; any other account accepts by signing in as
itself, with the address invited (models.Invitation).

An account that a project's admin (not staff) creates either way records who made it
(models.AccountOrigin): that admin held its link, so it may be theirs. It joins no other
project by its username, and whoever tries is told who made it; the way in is an invitation
to its address, which the address's owner accepts signed in as the account. Usernames of
study participants' accounts (prolific-<project>-<id>, mturk-…) are nobody's to add.
"""

import csv
import hashlib
import io
import re
import secrets
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.db.models.functions import Lower
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotation.errors import DomainError, ImportRejected, LineError
from annotation.models import (
    AccountOrigin,
    AuditLog,
    Invitation,
    Membership,
    Participant,
    Project,
    user_or_none,
)
from annotation.projects.tasks import send_invites_task

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
    by_email: bool = False  # named by an e-mail alone: invited, never shown the account


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
    if Participant.reserved_username(username):
        if first != email:
            raise DomainError(
                f"username {username!r} is reserved: study participants' accounts are named so."
            )
        username = f"u-{username}"  # a new account's name, made from the address alone
    if not USERNAME_RE.match(username):
        raise DomainError(
            f"username {username!r} may hold only letters, digits and @ . + - _ (150 at most)."
        )
    roles = sorted(set(roles or default_roles))
    if not roles:
        raise DomainError("no role: tick one above, or name one in the line (e.g. validator).")
    return Person(number, username, email, roles, by_email=first == email)


@transaction.atomic
def people_add(
    *, project: Project, actor: Any, people: list[Person], site: str
) -> list[dict[str, Any]]:
    """Give each person named by a username their roles (besides any they have), creating the
    accounts that do not exist; invite each person named by an e-mail alone. Each answer holds
    what the admin typed, the roles, and a link for a new account or an invitation (e-mailed
    too where there is an address). `site` is the scheme and host the links start with.
    Refused whole when a line names, by its username, an account that another project's
    admin made."""
    kept_out = _kept_out(project, people)
    if kept_out:
        raise ImportRejected(kept_out)
    # Case-insensitive, as people type names: "Alice" is the account "alice".
    named = User.objects.annotate(key=Lower("username"))
    existing = {
        u.key: u
        for u in named.filter(key__in=[p.username.lower() for p in people if not p.by_email])
    }
    taken = set(
        User.objects.annotate(key=Lower("email"))
        .filter(key__in=[p.email.lower() for p in people if p.email])
        .values_list("key", flat=True)
    )
    no_address = _without_address(people, existing, taken)
    if no_address:
        raise ImportRejected(no_address)
    invites: list[list[Any]] = []
    results = []
    for person in people:
        if person.by_email:  # a member once they accept, whether the account is new or not
            account = None
            if person.email.lower() not in taken:
                account = _account_create(person.username, person.email, project, actor)
                taken.add(person.email.lower())
            link = site + _invitation_create(project, person, actor, account)
            invites.append([person.email, link])
            results.append(
                {"username": "", "email": person.email, "roles": person.roles, "link": link}
            )
            continue
        user = existing.get(person.username.lower())
        link = ""
        if user is None:
            # An address that another account has stays that account's alone.
            email = "" if person.email.lower() in taken else person.email
            user = _account_create(person.username, email, project, actor)
            if settings.PASSWORD_LOGIN == "everyone":  # else it signs in by its address
                link = set_password_link(user, site)
                if email:
                    invites.append([email, link])
        _roles_add(project, user, person.roles)
        results.append(
            {"username": user.username, "email": person.email, "roles": person.roles, "link": link}
        )
    AuditLog.record(
        actor=actor,
        action="members_added",
        project=project,
        named=[r["username"] or r["email"] for r in results],
    )
    if invites:  # sent by a worker, after the commit: not 2,000 e-mails inside the request
        transaction.on_commit(partial(send_invites_task.delay, project.pk, invites))
    return results


def _without_address(
    people: list[Person], existing: dict[str, Any], taken: set[str]
) -> list[LineError]:
    """Where only staff have passwords (PASSWORD_LOGIN=staff), the lines that would make an
    account with no address of its own: it could never sign in."""
    if settings.PASSWORD_LOGIN == "everyone":
        return []
    return [
        LineError(
            p.line,
            f"{p.username} would be a new account, which needs its own e-mail address here: "
            "only staff have passwords, and everyone else signs in through the provider by "
            "their address.",
        )
        for p in people
        if not p.by_email
        and p.username.lower() not in existing
        and (not p.email or p.email.lower() in taken)
    ]


def free_username(base: str) -> str:
    """`base`, or where another account has it (e.g. for "ana@example.org" when an "ana"
    exists) `base` with a random ending, which tells nobody about the others: ana-3f9c."""
    username = base
    while User.objects.filter(username__iexact=username).exists():
        username = f"{base[:140]}-{secrets.token_hex(2)}"
    return username


def _account_create(username: str, email: str, project: Project, actor: Any) -> Any:
    """A new account without a password, under a free username. Made by a project's admin who
    is not staff, it records them."""
    user = User.objects.create_user(username=free_username(username), email=email)
    user.set_unusable_password()
    user.save(update_fields=["password"])
    if not getattr(actor, "is_staff", False):
        AccountOrigin.objects.create(
            user=user,
            project=project,
            project_slug=project.slug,
            created_by=user_or_none(actor),
            created_by_name=getattr(actor, "username", ""),
        )
    return user


def _kept_out(project: Project, people: list[Person]) -> list[LineError]:
    """Lines that name by its username an account that an admin of another project made: it
    joins no other project that way (AccountOrigin)."""
    names = {p.username.lower(): p for p in people if not p.by_email}
    found = AccountOrigin.objects.annotate(name=Lower("user__username"))
    errors = [
        LineError(names[origin.name].line, origin.refusal(names[origin.name].username))  # type: ignore[attr-defined]
        for origin in found.filter(name__in=list(names))
        if origin.keeps_out_of(project)
    ]
    return sorted(errors, key=lambda error: error.line or 0)


def check_may_join(project: Project, user: Any, username: str) -> None:
    """Refuse to give roles in `project`, by its username, to a participant's account, or to
    an account that an admin of another project made."""
    if Participant.reserved_username(user.username):
        raise DomainError(f"{username} is a study participant's account: it joins no project.")
    origin = AccountOrigin.objects.filter(user=user).first()
    if origin is not None and origin.keeps_out_of(project):
        raise DomainError(origin.refusal(username), code="conflict")


def _roles_add(project: Project, user: Any, roles: list[str]) -> None:
    have = set(Membership.objects.filter(project=project, user=user).values_list("role", flat=True))
    Membership.objects.bulk_create(
        [Membership(project=project, user=user, role=r) for r in roles if r not in have]
    )


def _invitation_create(project: Project, person: Person, actor: Any, account: Any) -> str:
    """A single-use link for the address typed; `account` is the account it just created
    (None for an address that an account already has). Only the token's digest is kept."""
    token = secrets.token_urlsafe(32)
    Invitation.objects.create(
        project=project,
        email=person.email.lower(),
        roles=person.roles,
        digest=_digest(token),
        account=account,
        created_by=user_or_none(actor),
        expires_at=timezone.now() + timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT),
    )
    return reverse("project-join", kwargs={"slug": project.slug, "token": token})


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invitation_read(project: Project, token: str) -> Invitation:
    """The invitation a link holds; DomainError if it was not made here, was withdrawn or
    has expired. A used one is returned, for the page to say so."""
    invitation = (
        Invitation.objects.select_related("account")
        .filter(project=project, digest=_digest(token))
        .first()
    )
    if invitation is None:
        raise DomainError(
            "This invitation link is not valid: copy it whole, as the e-mail or the "
            "project's admin gave it."
        )
    if invitation.revoked_at:
        raise DomainError(
            "This invitation was withdrawn by the project's admin: ask them for another."
        )
    if not invitation.used_at and invitation.expires_at <= timezone.now():
        raise DomainError("This invitation has expired: ask the project's admin for another.")
    return invitation


@transaction.atomic
def invitation_accept(*, invitation: Invitation, user: Any, password: str = "") -> None:
    """Give `user` the invitation's roles and use it up; a second use, even at the same
    moment, is refused. `password`: the new account's (the account this invitation created),
    set with the roles, or not at all."""
    if password:
        user.set_password(password)
        user.save(update_fields=["password"])
    locked = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if locked.used_at or locked.revoked_at:
        raise DomainError("This invitation has been used already.", code="conflict")
    locked.used_at, locked.used_by = timezone.now(), user
    locked.save(update_fields=["used_at", "used_by"])
    _roles_add(locked.project, user, locked.roles)
    AuditLog.record(
        actor=user, action="invitation_accepted", project=locked.project, roles=locked.roles
    )


def invitations_pending(project: Project) -> list[Invitation]:
    return [i for i in project.invitations.filter(used_at=None, revoked_at=None) if i.pending]


@transaction.atomic
def invitation_revoke(*, project: Project, actor: Any, invitation_id: int) -> Invitation:
    """Withdraw a pending invitation: its link stops working at once."""
    invitation = (
        Invitation.objects.select_for_update()
        .filter(project=project, pk=invitation_id, used_at=None, revoked_at=None)
        .first()
    )
    if invitation is None:
        raise DomainError("That invitation is not pending any more.", code="conflict")
    invitation.revoked_at = timezone.now()
    invitation.save(update_fields=["revoked_at"])
    AuditLog.record(
        actor=actor, action="invitation_revoked", project=project, email=invitation.email
    )
    return invitation


def set_password_link(user: Any, site: str) -> str:
    """Django's password-reset link: valid once, until PASSWORD_RESET_TIMEOUT."""
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    return site + reverse("password-set", kwargs={"uidb64": uid, "token": token})
