"""Accounts are one per name and per address, whatever the case; a project admin who adds
people learns no more about existing accounts than what they typed, and an account named by
its e-mail joins a project only when its owner accepts."""

import importlib
import re

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.core import mail
from django.db import IntegrityError, connection, transaction
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import Membership
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
migration = importlib.import_module("annotation.migrations.0018_accounts_unique_ignoring_case")


def signed_in(user):  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def roles(project, user):  # type: ignore[no-untyped-def]
    return sorted(
        Membership.objects.filter(project=project, user=user).values_list("role", flat=True)
    )


def test_a_username_or_e_mail_that_differs_only_by_case_is_refused_by_the_database(db):
    """ "Staffer" was created beside the staff user "staffer"; a second account got the staff
    user's e-mail in capitals."""
    UserFactory(username="staffer", email="staff@example.org", is_staff=True)
    for clash in ({"username": "Staffer"}, {"username": "other", "email": "STAFF@example.org"}):
        with pytest.raises(IntegrityError), transaction.atomic():
            User.objects.create_user(**clash)
    # Empty e-mails are many accounts' and never clash.
    User.objects.create_user(username="a1")
    User.objects.create_user(username="a2")


def test_the_migration_lists_accounts_that_already_clash_and_stops(db):
    with connection.cursor() as cursor:  # as the database was before the migration
        for name, _, _ in migration.INDEXES:
            cursor.execute(f"DROP INDEX {name}")
    UserFactory(username="staffer", email="s@example.org")
    UserFactory(username="Staffer", email="t@example.org")
    UserFactory(username="bob", email="Bob@Example.org")
    UserFactory(username="robert", email="bob@example.org")
    UserFactory(username="clean", email="")
    UserFactory(username="also-clean", email="")
    with pytest.raises(RuntimeError) as refused:
        migration.refuse_clashes(apps, None)
    said = str(refused.value)
    assert "rename or merge them" in said
    assert "username 'staffer': 'staffer' (id" in said and "'Staffer' (id" in said
    assert "email 'bob@example.org': 'bob' (id" in said and "'robert' (id" in said
    assert "clean" not in said and len(migration.clashes(apps)) == 2


def test_adding_an_existing_account_by_e_mail_shows_only_what_was_typed_and_waits_for_consent(
    project, people, django_capture_on_commit_callbacks, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    owner = UserFactory(username="secretname", email="Victim@Example.org")
    admin = signed_in(people["admin"])
    assert not people["admin"].is_staff
    with django_capture_on_commit_callbacks(execute=True):
        pasted = "victim@example.org\nnewcomer@example.org"
        answer = admin.post(
            f"/p/{project.slug}/members/", {"people": pasted, "roles": ["validator"]}
        )
    html = answer.content.decode()
    assert answer.status_code == 200
    assert "secretname" not in html and "Victim@Example.org" not in html
    # Both rows look alike: the address typed, the roles, an invitation link.
    row = (r"<tr><td[^>]*>(.*?)</td><td[^>]*>(.*?)</td><td[^>]*>(.*?)</td><td[^>]*>"
           r"<input class=\"link-copy\"[^>]* "
           r"value=\"http://testserver/p/[\w-]+/join/[^\"]+\"")  # fmt: skip
    rows = re.findall(row, html)
    assert rows == [
        ("", "victim@example.org", "validator"),
        ("", "newcomer@example.org", "validator"),
    ]
    # Neither is a member until they accept: the members' table shows nobody new, so it
    # tells no more than the rows (the walk found it listed the new account, not the other).
    newcomer = User.objects.get(email="newcomer@example.org")
    assert roles(project, owner) == [] and roles(project, newcomer) == []
    page = admin.get(f"/p/{project.slug}/members/").content.decode()
    listed = re.search(r'<table class="grid stack" id="members">.*?</table>', page, re.S).group(0)
    assert "newcomer" not in listed and "secretname" not in page
    # The invitations waiting list what was typed, and no more.
    waiting = re.search(r'<section class="card" id="invitations">.*?</section>', page, re.S)
    assert "newcomer@example.org" in waiting.group(0) and "Victim" not in waiting.group(0)
    sent = {message.to[0]: message.body for message in mail.outbox}
    link = re.search(r"http://testserver(/p/\S+)", sent["victim@example.org"]).group(1)

    stranger = signed_in(people["validator"]).get(link)
    assert stranger.status_code == 403 and "another account" in stranger.content.decode()
    assert Client().get(link)["Location"].startswith("/accounts/login/")
    page = signed_in(owner).get(link)
    assert (
        page.status_code == 200 and 'as <b id="join-roles">validator</b>' in page.content.decode()
    )
    joined = signed_in(owner).post(link)
    assert joined.status_code == 302 and roles(project, owner) == ["validator"]
    again = signed_in(owner).get(link).content.decode()
    assert 'id="join-member"' in again and "Join the project" not in again
    tampered = signed_in(owner).get(link[:-3] + "abc/")
    assert tampered.status_code == 400 and "not valid" in tampered.content.decode()


def test_a_username_row_never_takes_an_account_by_its_e_mail(project, people):
    """ "bob, ana@example.org" gave bob's roles to the account that had ana's address."""
    ana = UserFactory(username="ana", email="ana@example.org")
    admin = signed_in(people["admin"])
    answer = admin.post(f"/p/{project.slug}/members/",
                        {"people": "bob, ANA@example.org", "roles": ["expert"]})  # fmt: skip
    assert answer.status_code == 200
    bob = User.objects.get(username="bob")
    assert roles(project, bob) == ["expert"] and roles(project, ana) == []
    assert bob.email == ""  # the address stays ana's alone


def test_members_e_mails_are_shown_to_staff_only(project, people, staff):
    """A project admin who added an existing account by its username saw its e-mail."""
    people["validator"].email = "val@example.org"
    people["validator"].save()
    members = f"/p/{project.slug}/members/"
    assert "val@example.org" not in signed_in(people["admin"]).get(members).content.decode()
    assert "val@example.org" in signed_in(staff).get(members).content.decode()


def test_the_admin_form_refuses_an_e_mail_another_account_has_in_other_case(staff):
    UserFactory(username="first", email="first@example.org")
    second = UserFactory(username="second", email="second@example.org")
    page = signed_in(staff).get(f"/admin/auth/user/{second.pk}/change/")
    assert page.status_code == 200
    form = {"username": "second", "email": "FIRST@example.org", "is_active": "on",
            "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00",
            "initial-date_joined_0": "2026-01-01", "initial-date_joined_1": "00:00:00"}  # fmt: skip
    answer = signed_in(staff).post(f"/admin/auth/user/{second.pk}/change/", form)
    assert answer.status_code == 200
    assert "Another account has this email (case is ignored)." in answer.content.decode()
    second.refresh_from_db()
    assert second.email == "second@example.org"


def test_an_account_a_project_admin_made_joins_no_other_project_silently(project, people, staff):
    """Issue 58, item 6: beta's admin added "carol, carol@corp.example" and set its password
    from the link; when staff later added carol (or carol@corp.example) to alpha, the account
    got alpha's roles, and beta's admin, signed in as carol, read alpha. Now whoever adds it
    elsewhere by its name is told it exists and who made it, and nothing changes; an
    invitation to its address waits for the address's owner."""
    from annotation.models import AccountOrigin
    from tests.factories import ProjectFactory, member

    beta = ProjectFactory(slug="beta")
    beta_admin = member(beta, "mallory", "admin")
    pasted = {"people": "carol, carol@corp.example", "roles": ["validator"]}
    made = signed_in(beta_admin).post("/p/beta/members/", pasted)
    assert made.status_code == 200
    carol = User.objects.get(username="carol")
    assert roles(beta, carol) == ["validator"]
    assert AccountOrigin.objects.get(user=carol).created_by_name == "mallory"
    for who in (staff, people["admin"]):
        client = signed_in(who)
        for line in ("carol, carol@corp.example", "carol"):
            answer = client.post(
                f"/p/{project.slug}/members/", {"people": line, "roles": ["admin"]}
            )
            said = answer.content.decode()
            assert answer.status_code == 400, (who, line)
            assert "mallory, an admin of project beta, created" in said, (who, line)
        api = APIClient()
        api.force_authenticate(who)
        body = {"username": "carol", "roles": ["admin"]}
        refused = api.post(f"/api/projects/{project.slug}/members/", body, format="json")
        assert refused.status_code == 409 and "mallory" in refused.json()["detail"]
    assert roles(project, carol) == [] and not project.invitations.exists()
    # The way in is an invitation to the address, which its owner accepts as the account.
    invited = signed_in(staff).post(
        f"/p/{project.slug}/members/", {"people": "carol@corp.example", "roles": ["validator"]}
    )
    assert invited.status_code == 200 and roles(project, carol) == []
    assert project.invitations.get().email == "carol@corp.example"
    # In its own project it is a member as any: beta's admin gives it roles again.
    again = signed_in(beta_admin).post("/p/beta/members/", {"people": "carol", "roles": ["expert"]})
    assert again.status_code == 200 and roles(beta, carol) == ["expert", "validator"]


def test_participants_usernames_are_nobodys_to_add(project, people, staff):
    """prolific-<project>-<id> and mturk-… are the study links' accounts: added by hand, the
    participant's own link could not make theirs."""
    for who in (people["admin"], staff):
        answer = signed_in(who).post(
            f"/p/{project.slug}/members/",
            {
                "people": "Prolific-7-5f3a9c0e1b2d4e6f7a8b9c0d\nmturk-1-A1B2C3",
                "roles": ["validator"],
            },
        )
        assert answer.status_code == 400
        assert answer.content.decode().count("reserved: study participants") == 2
    assert not User.objects.filter(username__iregex=r"^(prolific|mturk)-").exists()
    # An address alone still invites its owner, under a name outside the namespace.
    signed_in(people["admin"]).post(
        f"/p/{project.slug}/members/", {"people": "prolific-1-x@corp.example", "roles": ["expert"]}
    )
    assert User.objects.get(email="prolific-1-x@corp.example").username == "u-prolific-1-x"
