"""What a participant meets (issue 49, second walk): a start page before any item (the task, the
guidelines, how many items, that some check the work), a header that leads nowhere they cannot
go (the brand opens their study's page, Leave says how to come back), and a second participant
id in the same browser that asks which one goes on rather than switching silently."""

import re

import pytest
from django.test import Client

from annotation.crowd.services import studies
from annotation.models import Guidelines, Participant
from tests.annotation.crowd.conftest import configure
from tests.annotation.crowd.test_studies import PID, arrive, label_one

pytestmark = pytest.mark.django_db
GUIDE = "Label the **sentiment** of the whole review, not of one phrase."


@pytest.fixture
def study(crowd_project, people):  # type: ignore[no-untyped-def]
    configure(crowd_project, qualification_items=2, gold_rate=0.2)
    Guidelines.objects.create(project=crowd_project, version=1, text=GUIDE)
    return studies.study_create(project=crowd_project, actor=people["admin"], name="Pilot",
                                platform="prolific", items_per_participant=6)  # fmt: skip


def start_page(client, study) -> str:  # type: ignore[no-untyped-def]
    answer = client.get(f"/p/{study.project.slug}/study/{study.token}/")
    assert answer.status_code == 200
    return answer.content.decode()


def test_a_participant_starts_on_a_page_that_explains_the_task(study, crowd_project):
    client = Client()
    arrived = arrive(client, study)
    # Their ids leave the address: the study's own page follows, not an item.
    assert arrived.status_code == 302
    assert arrived.url == f"/p/{crowd_project.slug}/study/{study.token}/"
    page = start_page(client, study)
    assert 'data-item="' not in page
    labels = "<b>positive</b>, <b>negative</b> or <b>mixed</b>"
    assert f"choose the label that fits each one: {labels}." in page
    assert "Label the <strong>sentiment</strong> of the whole review" in page
    assert re.search(r"You will label <b>6</b> items\.", page)
    checks = page.split('id="study-checks">')[1].split("</p>")[0]
    assert "a short test and checks along the way" in checks
    assert "you are not told which" in checks
    start = re.search(r'<a class="button primary" id="start" href="([^"]+)">Start</a>', page)
    assert start is not None and start[1] == f"/p/{crowd_project.slug}/validate/"
    assert 'data-item="' in client.get(start[1]).content.decode()


def test_without_gates_the_start_page_says_nothing_of_checks(crowd_project, people):
    study = studies.study_create(project=crowd_project, actor=people["admin"], name="Plain",
                                 platform="prolific", items_per_participant=3)  # fmt: skip
    client = Client()
    arrive(client, study)
    page = start_page(client, study)
    assert "You will label <b>3</b> items" in page and 'id="study-checks"' not in page


def test_mturk_workers_get_the_start_page_and_the_preview_explains_the_same(crowd_project, people):
    configure(crowd_project, qualification_items=1)
    Guidelines.objects.create(project=crowd_project, version=1, text=GUIDE)
    study = studies.study_create(project=crowd_project, actor=people["admin"], name="HIT",
                                 platform="mturk", items_per_participant=4)  # fmt: skip
    url = f"/p/{crowd_project.slug}/study/{study.token}/"
    preview = Client().get(url, {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"}).content.decode()
    assert "<strong>sentiment</strong>" in preview and "You will label <b>4</b> items" in preview
    assert "a short test" in preview and 'id="start"' not in preview
    assert "Accept the task to begin" in preview and not Participant.objects.exists()
    worker = Client()
    answer = worker.get(url, {"workerId": "A1B2C3D4E5F6G7", "assignmentId": "3AB", "hitId": "H"})
    assert answer.status_code == 302 and answer.url == url
    page = start_page(worker, study)
    assert "<strong>sentiment</strong>" in page and 'id="start"' in page


def test_a_returning_participant_reads_how_far_they_are_and_goes_on(study, crowd_project):
    client = Client()
    arrive(client, study)
    label_one(client, crowd_project)
    again = Client()
    arrive(again, study, SESSION_ID="se2")
    page = start_page(again, study)
    assert "you have labelled 1 so far" in page
    assert re.search(r'id="start" href="[^"]+">Go on</a>', page)
    configure(crowd_project, qualification_items=0, gold_rate=0)
    for _ in range(5):
        label_one(again, crowd_project)
    answer = again.get(f"/p/{crowd_project.slug}/study/{study.token}/")
    assert answer.status_code == 302 and answer.url.endswith("/done/")


def test_every_link_and_form_of_a_participants_pages_opens_for_them(study, crowd_project):
    client = Client()
    arrive(client, study)
    slug = crowd_project.slug
    home = f"/p/{slug}/study/{study.token}/"
    for url in (home, f"/p/{slug}/validate/"):
        page = client.get(url).content.decode()
        header = page.split("</header>")[0]
        # The brand opens their study's page; no log out (their account has no password).
        assert re.search(rf'<a class="brand" href="{re.escape(home)}">ContrastLab</a>', header)
        assert "/accounts/logout/" not in header and "Log out" not in header
        assert f"Participant {PID}" in header
        assert re.search(rf'action="{re.escape(home)}leave/"[^>]*>.*>Leave</button>', header)
        for link in set(re.findall(r'href="(/[^"]*)"', page)) - {"/static/css/app.css"}:
            assert client.get(link).status_code == 200, (url, link)


def test_leave_signs_out_and_says_how_to_come_back(study, crowd_project):
    client = Client()
    arrive(client, study)
    label_one(client, crowd_project)
    left = client.post(f"/p/{crowd_project.slug}/study/{study.token}/leave/")
    page = left.content.decode()
    assert left.status_code == 200
    assert "the 1 item you labelled is kept" in page
    assert "open the study again from Prolific, with the same link" in page
    assert "ContrastLab</span>" in page.split("</header>")[0]  # no link to a login form
    assert client.get(f"/p/{crowd_project.slug}/validate/").status_code == 302  # signed out
    arrive(client, study)
    assert "you have labelled 1 so far" in start_page(client, study)
    assert Participant.objects.count() == 1
    # Leaving twice, or with no session, is the same page.
    assert Client().post(f"/p/{crowd_project.slug}/study/{study.token}/leave/").status_code == 200


def test_a_second_participant_id_asks_which_one_goes_on(study, crowd_project, people):
    client = Client()
    arrive(client, study)
    label_one(client, crowd_project)
    other = "9" * 24
    asked = arrive(client, study, pid=other)
    page = asked.content.decode()
    assert asked.status_code == 409
    assert f"already working as participant <b>{PID}</b>" in page
    assert f"for participant <b>{other}</b>" in page
    assert Participant.objects.count() == 1
    # Nothing switched: the first participant's count is still theirs.
    assert "you have labelled 1 so far" in start_page(client, study)
    keep = re.search(r'id="keep-participant" href="([^"]+)"', page)
    assert keep is not None and client.get(keep[1]).status_code == 200
    # Switching is a choice, made by the form (which keeps the new id's query).
    action = re.search(r'<form method="post" action="([^"]+)" id="switch-participant"', page)
    assert action is not None
    switched = client.post(action[1].replace("&amp;", "&"), {"switch": "1"})
    assert switched.status_code == 302
    assert Participant.objects.count() == 2
    assert f"Participant {other}" in start_page(client, study)
    assert "so far" not in start_page(client, study)
    # The first one comes back with their own link, in their own session.
    back = Client()
    arrive(back, study)
    assert "you have labelled 1 so far" in start_page(back, study)


def test_another_projects_study_link_asks_rather_than_answering_404(study, crowd_project, people):
    elsewhere = people["outsider"].memberships.first().project
    other_study = studies.study_create(project=elsewhere, actor=people["outsider"], name="O",
                                       platform="prolific")  # fmt: skip
    client = Client()
    arrive(client, study)
    asked = arrive(client, other_study)
    assert asked.status_code == 409
    assert "on another study" in asked.content.decode()
    assert not Participant.objects.filter(project=elsewhere).exists()
    # Without ids, another study's page leads the participant back to their own.
    answer = client.get(f"/p/{elsewhere.slug}/study/{other_study.token}/")
    assert (
        answer.status_code == 302 and answer.url == f"/p/{crowd_project.slug}/study/{study.token}/"
    )
    # Their scope is unchanged: the other project's pages stay closed.
    assert client.get(f"/p/{elsewhere.slug}/validate/").status_code == 404
