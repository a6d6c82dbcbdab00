"""The Members page: adding many people at once (new accounts get a one-time set-password
link, by e-mail too), all or nothing; and the Members and Validators tables, searchable,
sortable with numbers as numbers, and paginated."""

import re

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation.models import Membership
from tests.factories import import_votes

pytestmark = pytest.mark.django_db


def browser(user=None) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def roles(project, username):  # type: ignore[no-untyped-def]
    return sorted(
        Membership.objects.filter(project=project, user__username=username).values_list(
            "role", flat=True
        )
    )


@pytest.fixture
def eager_tasks(monkeypatch):  # type: ignore[no-untyped-def]
    """Celery tasks run where they are sent (the invitations' e-mails, here)."""
    from config.celery import app

    monkeypatch.setitem(app.conf, "task_always_eager", True)


def test_a_pasted_list_creates_accounts_whose_link_sets_a_password_once(
    project, people, django_capture_on_commit_callbacks, eager_tasks
):
    page = browser(people["admin"])
    pasted = "ana@example.org\nben, ben@example.org, validator expert\nerin\ncarla"
    # The e-mails go after the commit, from a worker's task (run here).
    with django_capture_on_commit_callbacks(execute=True):
        answer = page.post(
            f"/p/{project.slug}/members/", {"people": pasted, "roles": ["validator"]}
        )
    assert answer.status_code == 200
    assert roles(project, "ana") == []  # invited by e-mail: a member once she accepts
    assert roles(project, "ben") == ["expert", "validator"]
    assert roles(project, "erin") == ["expert", "validator"]  # an existing account: roles added
    assert User.objects.filter(username="erin").count() == 1
    ana = User.objects.get(username="ana")
    assert ana.email == "ana@example.org" and not ana.has_usable_password()
    html = answer.content.decode()
    shown = re.findall(r'class="link-copy"[^>]* value="(http://testserver/[^"]+)"', html)
    assert len(shown) == 3  # ana (invited by e-mail), ben, carla; erin existed
    sent = {message.to[0]: message.body for message in mail.outbox}
    assert set(sent) == {"ana@example.org", "ben@example.org"}  # carla has no address
    ana_link = next(link for link in shown if link in sent["ana@example.org"])

    newcomer = browser()
    form = newcomer.get(ana_link)
    assert form.status_code == 200 and "Choose your password to join" in form.content.decode()
    done = newcomer.post(ana_link, {
        "new_password1": "a long pass phrase 42", "new_password2": "a long pass phrase 42"
    }, follow=True)  # fmt: skip
    assert "Your password is set, and you joined" in done.content.decode()
    assert roles(project, "ana") == ["validator"]
    logged = browser().post("/accounts/login/", {"username": "ana",
                                                 "password": "a long pass phrase 42"})  # fmt: skip
    assert logged.status_code == 302 and logged["Location"] == "/start/"  # where her role starts
    # Used once: the invitation now says so, and sets no password.
    again = browser().get(ana_link)
    assert again.status_code == 410 and "used already" in again.content.decode()
    assert "Choose your password" not in again.content.decode()


def test_one_bad_line_adds_nobody_and_says_which(project, people):
    page = browser(people["admin"])
    before = User.objects.count()
    pasted = "ana@example.org\nnot an address@\nben, boss\nana"
    answer = page.post(f"/p/{project.slug}/members/", {"people": pasted, "roles": ["validator"]})
    assert answer.status_code == 400
    html = answer.content.decode()
    assert "line 2: username &#x27;not an address@&#x27; may hold only" in html
    assert "line 3: &#x27;boss&#x27;: expected an e-mail or roles after &#x27;ben&#x27;." in html
    assert "line 4: ana is listed twice." in html
    assert User.objects.count() == before and not mail.outbox


@pytest.mark.parametrize(
    ("backend", "said", "unsaid"),
    [
        (
            "django.core.mail.backends.locmem.EmailBackend",
            "it was also e-mailed",
            "sends no e-mail",
        ),
        ("django.core.mail.backends.dummy.EmailBackend", "sends no e-mail", "e-mailed"),
    ],
)
def test_the_links_card_says_they_were_e_mailed_only_where_the_site_sends_e_mail(
    project, people, settings, backend, said, unsaid
):
    """The default backend drops every e-mail: the card must not tell the admin otherwise."""
    settings.EMAIL_BACKEND = backend
    answer = browser(people["admin"]).post(
        f"/p/{project.slug}/members/", {"people": "dana, dana@example.org", "roles": ["validator"]}
    )
    card = answer.content.decode().split('id="copy-all"')[0][-700:]
    assert answer.status_code == 200 and said in card and unsaid not in card


def test_the_first_cell_names_the_person_even_a_role_word_and_case_is_ignored(
    project, people, django_capture_on_commit_callbacks
):
    """ "admin, expert validator" failed with "username ''"; "Alice" made a second alice."""
    page = browser(people["admin"])
    with django_capture_on_commit_callbacks(execute=True) as sent:
        answer = page.post(
            f"/p/{project.slug}/members/",
            {
                "people": "admin, expert validator\nALICE, validator\nnew, New@Example.org",
                "roles": ["validator"],
            },
        )
    html = answer.content.decode()
    assert answer.status_code == 200, html[html.find('role="alert"') - 200 :][:1500]
    assert roles(project, "admin") == ["expert", "validator"]
    assert roles(project, "alice") == ["admin", "validator"]
    assert not User.objects.filter(username="ALICE").exists()
    assert len(sent) == 1 and not mail.outbox  # one task for the e-mails, none in the request


def test_a_csv_file_with_a_header_adds_people_with_their_roles(project, people):
    page = browser(people["admin"])
    csv = "username,email,roles\nw1,w1@example.org,validator\nw2,,expert\n"
    upload = SimpleUploadedFile("people.csv", csv.encode())
    answer = page.post(f"/p/{project.slug}/members/", {"people": "", "file": upload})
    assert answer.status_code == 200, answer.content.decode()[:3000]
    assert roles(project, "w1") == ["validator"] and roles(project, "w2") == ["expert"]


def test_only_admins_add_people(project, people):
    for role in ("expert", "validator", "outsider"):
        answer = browser(people[role]).post(f"/p/{project.slug}/members/", {"people": "mallory"})
        assert answer.status_code in (403, 404)
    assert not User.objects.filter(username="mallory").exists()


def test_members_table_searches_sorts_and_paginates(project, people):
    page = browser(people["admin"])
    names = "\n".join(f"w{n}" for n in range(1, 121))
    assert page.post(f"/p/{project.slug}/members/", {"people": names, "roles": ["validator"]})
    first = page.get(f"/p/{project.slug}/members/").content.decode()
    assert "Page 1 of 3" in first
    shown = re.findall(r"<tr><td>(w\d+)</td>", first)
    assert shown[:3] == ["w1", "w2", "w3"]  # w2 before w10: numbers sort as numbers
    down = page.get(f"/p/{project.slug}/members/?sort=-username").content.decode()
    assert re.findall(r"<tr><td>(\w+)</td>", down)[:2] == ["w120", "w119"]
    found = page.get(f"/p/{project.slug}/members/?q=w11").content.decode()
    assert re.findall(r"<tr><td>(w\d+)</td>", found) == ["w11"] + [f"w{n}" for n in range(110, 120)]


def test_validators_table_sorts_votes_as_numbers_and_shows_a_histogram(project, people, client_for):
    admin = client_for(people["admin"])
    lines = [
        {"id": f"r{n}", "fields": {"text": f"text {n}"},
         "label_distribution": {"positive": [f"w{n % 12}", "w100"],
                                "negative": ["w2"] * (n % 3 == 0)}}
        for n in range(30)
    ]  # fmt: skip
    assert import_votes(admin, project, lines).status_code in (200, 201)
    page = browser(people["admin"])
    html = page.get(f"/p/{project.slug}/validators/?sort=-votes").content.decode()
    counts = [int(n) for n in re.findall(r'<td class="num" data-label="Votes">(\d+)</td>', html)]
    assert counts == sorted(counts, reverse=True) and counts[0] == 30  # w100 voted on all
    assert 'id="agreement-histogram"' in html
    by_name = page.get(f"/p/{project.slug}/validators/?sort=validator").content.decode()
    names = re.findall(r'<td data-label="Validator">ext-sentiment-(w\d+)</td>', by_name)
    assert names.index("w2") < names.index("w10") < names.index("w100")
