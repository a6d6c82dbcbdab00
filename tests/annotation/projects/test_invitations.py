"""An invitation link chooses a password only for the account that the same invitation
created, before anyone has signed in to it; it works once, and its admin can withdraw it
(issue 48, item 1: the admin of one project took over a pending account of another)."""

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from annotation.models import AuditLog, Invitation, Membership
from tests.annotation.projects.test_accounts import roles, signed_in
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db
PASSWORD = "a long enough password 42"


def invite(admin, project, line):  # type: ignore[no-untyped-def]
    """The link that the Members page hands out for one pasted line."""
    answer = signed_in(admin).post(
        f"/p/{project.slug}/members/", {"people": line, "roles": ["validator"]}
    )
    assert answer.status_code == 200, answer.content.decode()[:500]
    links = re.findall(r'value="http://testserver(/p/[^"]+)"', answer.content.decode())
    assert len(links) == 1
    return links[0]


def set_password(client, link):  # type: ignore[no-untyped-def]
    return client.post(link, {"new_password1": PASSWORD, "new_password2": PASSWORD})


@pytest.fixture
def two_projects(db):  # type: ignore[no-untyped-def]
    alpha, beta = ProjectFactory(slug="alpha"), ProjectFactory(slug="beta")
    alpha_admin, beta_admin = UserFactory(username="aa"), UserFactory(username="ba")
    Membership.objects.create(project=alpha, user=alpha_admin, role="admin")
    Membership.objects.create(project=beta, user=beta_admin, role="admin")
    return alpha, beta, alpha_admin, beta_admin


def test_another_projects_admin_cannot_take_over_a_pending_account(two_projects):
    alpha, beta, alpha_admin, beta_admin = two_projects
    carols_link = invite(alpha_admin, alpha, "carol@corp.example")
    carol = User.objects.get(email="carol@corp.example")
    assert not carol.has_usable_password()

    # Beta's admin pastes Carol's address: beta's link must not choose her password.
    stolen = invite(beta_admin, beta, "carol@corp.example")
    anonymous = Client()
    page = anonymous.get(stolen)
    assert page.status_code == 302 and page["Location"].startswith("/accounts/login/")
    assert "new_password1" not in anonymous.get(stolen, follow=True).content.decode()
    taken = set_password(anonymous, stolen)
    assert taken.status_code == 302 and taken["Location"].startswith("/accounts/login/")
    carol.refresh_from_db()
    assert not carol.has_usable_password() and "_auth_user_id" not in anonymous.session
    assert anonymous.get(f"/p/{alpha.slug}/data/").status_code == 302  # to the login page

    # Carol's own link still works, once.
    joined = set_password(Client(), carols_link)
    assert joined.status_code == 302 and joined["Location"] == f"/p/{alpha.slug}/"
    carol.refresh_from_db()
    assert carol.check_password(PASSWORD) and roles(alpha, carol) == ["validator"]
    # Then beta's invitation is hers to accept, signed in as herself.
    assert roles(beta, carol) == []
    assert signed_in(carol).post(stolen).status_code == 302
    assert roles(beta, carol) == ["validator"]


def test_an_account_made_by_username_is_not_handed_to_an_e_mail_invitation(two_projects):
    """Staff added "carol, carol@corp.example" by username: her account has no password and
    her own set-password link; another admin's invitation to that address cannot set it."""
    alpha, beta, alpha_admin, beta_admin = two_projects
    answer = signed_in(alpha_admin).post(
        f"/p/{alpha.slug}/members/", {"people": "carol, carol@corp.example", "roles": ["admin"]}
    )
    own = re.search(r'value="http://testserver(/accounts/[^"]+)"', answer.content.decode())
    stolen = invite(beta_admin, beta, "Carol@Corp.example")
    assert "new_password1" not in Client().get(stolen, follow=True).content.decode()
    set_password(Client(), stolen)
    carol = User.objects.get(username="carol")
    assert not carol.has_usable_password()
    assert own is not None and Client().get(own.group(1), follow=True).status_code == 200


def test_an_invitation_works_once(project, people):
    """Dave joined, staff removed his roles, and his link made him a validator again."""
    link = invite(people["admin"], project, "dave@example.org")
    dave = User.objects.get(email="dave@example.org")
    assert set_password(Client(), link).status_code == 302
    assert roles(project, dave) == ["validator"]
    Membership.objects.filter(project=project, user=dave).delete()

    again = signed_in(dave).post(link)
    assert again.status_code == 410 and "used already" in again.content.decode()
    assert roles(project, dave) == []
    anonymous = set_password(Client(), link)
    assert anonymous.status_code == 410 and roles(project, dave) == []


def test_an_existing_account_accepts_once_and_only_as_itself(project, people):
    owner = UserFactory(username="owner", email="owner@example.org")
    link = invite(people["admin"], project, "OWNER@example.org")
    assert signed_in(people["expert"]).post(link).status_code == 403
    assert signed_in(owner).post(link).status_code == 302
    assert roles(project, owner) == ["validator"]
    assert 'id="join-member"' in signed_in(owner).get(link).content.decode()
    assert signed_in(people["expert"]).get(link).status_code == 410
    used = Invitation.objects.get(email="owner@example.org")
    assert used.used_by == owner and used.used_at is not None


def test_a_withdrawn_invitation_stops_working_and_is_logged(project, people):
    link = invite(people["admin"], project, "eve@example.org")
    members = signed_in(people["admin"]).get(f"/p/{project.slug}/members/").content.decode()
    assert "eve@example.org" in members and "Withdraw" in members
    invitation = Invitation.objects.get(email="eve@example.org")
    # Another project's admin cannot withdraw it, through their own Members page.
    signed_in(people["outsider"]).post("/p/elsewhere/members/", {"revoke": invitation.pk})
    invitation.refresh_from_db()
    assert invitation.revoked_at is None

    withdrawn = signed_in(people["admin"]).post(
        f"/p/{project.slug}/members/", {"revoke": invitation.pk}, follow=True
    )
    assert "is withdrawn" in withdrawn.content.decode()
    page = set_password(Client(), link)
    assert page.status_code == 400 and "withdrawn" in page.content.decode()
    assert not User.objects.get(email="eve@example.org").has_usable_password()
    assert AuditLog.objects.filter(action="invitation_revoked", project=project).count() == 1
    listed = signed_in(people["admin"]).get(f"/p/{project.slug}/members/").content.decode()
    assert 'id="invitations"' not in listed


def test_the_password_form_is_gone_once_the_account_has_signed_in(project, people):
    """A new account that signed in by another way (staff set its password, then reset it
    unusable) is no longer the invitation's to set up."""
    link = invite(people["admin"], project, "fay@example.org")
    fay = User.objects.get(email="fay@example.org")
    signed_in(fay)  # force_login records the sign-in
    fay.refresh_from_db()
    assert fay.last_login is not None and not fay.has_usable_password()
    assert Client().get(link)["Location"].startswith("/accounts/login/")


def test_links_store_only_a_digest(project, people):
    link = invite(people["admin"], project, "gus@example.org")
    token = link.rstrip("/").rsplit("/", 1)[-1]
    stored = Invitation.objects.get(email="gus@example.org")
    assert token not in (stored.digest, str(stored.roles)) and len(stored.digest) == 64
