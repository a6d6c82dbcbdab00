"""Study links: a participant from Prolific or MTurk gets an account of one project, labels
their items, gets the completion code; returning resumes; payments per study."""

import csv
import io
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from annotation.crowd.services import studies
from annotation.models import GoldAnswer, Lease, Membership, Participant, Study, Vote
from tests.annotation.crowd.conftest import configure, right_label
from tests.factories import member

pytestmark = pytest.mark.django_db
PID = "5f3a9c0e1b2d4e6f7a8b9c0d"


@pytest.fixture
def study(crowd_project, people):  # type: ignore[no-untyped-def]
    return studies.study_create(project=crowd_project, actor=people["admin"], name="Pilot",
                                platform="prolific", items_per_participant=2,
                                completion_code="C0DE42")  # fmt: skip


def arrive(client, study, pid=PID, **query):  # type: ignore[no-untyped-def]
    params = {"PROLIFIC_PID": pid, "STUDY_ID": "st1", "SESSION_ID": "se1", **query}
    return client.get(f"/p/{study.project.slug}/study/{study.token}/", params)


def label_one(client, project):  # type: ignore[no-untyped-def]
    """Label the item the Validate page shows, as its form does."""
    page = client.get(f"/p/{project.slug}/validate/")
    if page.status_code == 302:
        return page
    item_id = int(page.content.decode().split('data-item="')[1].split('"')[0])
    from annotation.models import GoldItem, ValidationItem

    item = ValidationItem.objects.filter(pk=item_id).first() or GoldItem.objects.get(pk=item_id)
    return client.post(f"/p/{project.slug}/validate/{item_id}/vote/", {"label": right_label(item)})


def test_a_participant_labels_their_items_and_gets_the_code(study, crowd_project):
    client = Client()
    answer = arrive(client, study)
    assert (
        answer.status_code == 302 and answer.url == f"/p/{crowd_project.slug}/study/{study.token}/"
    )
    (participant,) = Participant.objects.all()
    user = participant.user
    assert (user.email, user.has_usable_password()) == ("", False)
    assert list(Membership.objects.filter(user=user).values_list("project__slug", "role")) == [
        (crowd_project.slug, "validator")
    ]
    assert (participant.platform_study, participant.platform_session) == ("st1", "se1")
    label_one(client, crowd_project)
    label_one(client, crowd_project)
    done = client.get(f"/p/{crowd_project.slug}/validate/")
    assert done.status_code == 302 and done.url.endswith(f"/study/{study.token}/done/")
    page = client.get(done.url).content.decode()
    assert 'id="completion-code">C0DE42<' in page
    assert "https://app.prolific.com/submissions/complete?cc=C0DE42" in page
    # The API serves a finished participant nothing more either.
    assert client.get(f"/api/projects/{crowd_project.slug}/validation/next/").status_code == 204


def test_a_returning_participant_resumes_and_counts_once(study, crowd_project):
    first = Client()
    arrive(first, study)
    label_one(first, crowd_project)
    page = first.get(f"/p/{crowd_project.slug}/validate/").content.decode()
    held = int(page.split('data-item="')[1].split('"')[0])
    # Back later, in another browser, from the same id: the same account, the same item.
    again = Client()
    arrive(again, study, SESSION_ID="se2")
    assert get_user_model().objects.filter(username__startswith="prolific-").count() == 1
    assert Participant.objects.count() == 1
    page = again.get(f"/p/{crowd_project.slug}/validate/").content.decode()
    assert f'data-item="{held}"' in page
    assert 'You have labelled <b id="done-count">1</b>' in page
    # Their earlier vote, sent again, is the same vote: never counted twice.
    user = Participant.objects.get().user
    (vote,) = Vote.objects.filter(validator=user)
    repeat = again.post(f"/api/projects/{crowd_project.slug}/validation/{vote.item_id}/vote/",
                        {"label": vote.label}, content_type="application/json")  # fmt: skip
    assert repeat.status_code == 200
    assert studies.items_done(Participant.objects.get()) == 1


def test_a_participant_who_leaves_gives_their_lease_back_after_lease_ttl(study, crowd_project):
    configure(crowd_project, votes_per_item=1, majority=1)
    client = Client()
    arrive(client, study)
    page = client.get(f"/p/{crowd_project.slug}/validate/").content.decode()
    held = int(page.split('data-item="')[1].split('"')[0])
    other = member(crowd_project, "other", "validator")
    from annotation.validation.services.queue import next_item

    served = [next_item(project=crowd_project, validator=other, skip=[]) for _ in range(1)]
    assert held not in [i.pk for i in served]  # leased: the only vote it needs is theirs
    Lease.objects.filter(item_id=held).update(expires_at=timezone.now() - timedelta(seconds=1))
    taken = set()
    for _ in range(4):
        item = next_item(project=crowd_project, validator=other, skip=list(taken))
        if item is None:
            break
        taken.add(item.pk)
    assert held in taken


def test_mturk_ids_and_preview(crowd_project, people):
    study = studies.study_create(project=crowd_project, actor=people["admin"], name="HIT",
                                 platform="mturk")  # fmt: skip
    assert study.items_per_participant == crowd_project.setting("items_per_participant")
    client = Client()
    url = f"/p/{crowd_project.slug}/study/{study.token}/"
    preview = client.get(url, {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "H1"})
    assert preview.status_code == 200 and not Participant.objects.exists()
    answer = client.get(url, {"workerId": "A1B2C3D4E5F6G7", "assignmentId": "3AB", "hitId": "H1"})
    assert answer.status_code == 302 and answer.url == url
    participant = Participant.objects.get()
    assert (participant.external_id, participant.assignment) == ("A1B2C3D4E5F6G7", "3AB")


@pytest.mark.parametrize("query", [{}, {"PROLIFIC_PID": "x" * 65}, {"PROLIFIC_PID": "a b"},
                                   {"PROLIFIC_PID": "ok", "SESSION_ID": "<script>"}])  # fmt: skip
def test_a_link_without_a_valid_id_makes_no_account(study, query):
    answer = Client().get(f"/p/{study.project.slug}/study/{study.token}/", query)
    assert answer.status_code == 400
    assert "<script>" not in answer.content.decode()
    assert not Participant.objects.exists()


def test_a_wrong_token_or_project_is_not_found(study, people):
    client = Client()
    assert (
        client.get(f"/p/{study.project.slug}/study/nope/", {"PROLIFIC_PID": PID}).status_code == 404
    )
    assert (
        client.get(f"/p/elsewhere/study/{study.token}/", {"PROLIFIC_PID": PID}).status_code == 404
    )


def test_someone_signed_in_is_not_switched_to_a_participant(study, people):
    client = Client()
    client.force_login(people["admin"])
    answer = arrive(client, study)
    assert answer.status_code == 409
    assert not Participant.objects.exists()
    assert client.get("/").status_code == 200  # still the admin


def test_payments_csv(study, crowd_project, people):
    configure(crowd_project, qualification_items=1)
    done, started = Client(), Client()
    arrive(done, study, pid="aaaaaaaaaaaaaaaaaaaaaaaa")
    for _ in range(2):
        label_one(done, crowd_project)
    done.get(f"/p/{crowd_project.slug}/validate/")  # completes
    arrive(started, study, pid="bbbbbbbbbbbbbbbbbbbbbbbb")
    label_one(started, crowd_project)
    admin = Client()
    admin.force_login(people["admin"])
    answer = admin.get(f"/api/projects/{crowd_project.slug}/studies/{study.pk}/payments/")
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(answer.streaming_content).decode())))
    by_id = {r["participant_id"]: r for r in rows}
    first, second = Participant.objects.order_by("started_at")
    # Independent recount from the stored rows.
    for p, row in ((first, by_id["a" * 24]), (second, by_id["b" * 24])):
        n = Vote.objects.filter(validator=p.user).count() + GoldAnswer.objects.filter(
            validator=p.user).count()  # fmt: skip
        assert int(row["items"]) == n
        times = [
            *Vote.objects.filter(validator=p.user).values_list("created_at", flat=True),
            *GoldAnswer.objects.filter(validator=p.user).values_list("created_at", flat=True),
        ]
        end = p.completed_at or max(times)
        assert int(row["seconds"]) == round((end - p.started_at).total_seconds())
        assert (row["study_id"], row["session_id"]) == ("st1", "se1")
    assert (by_id["a" * 24]["passed"], by_id["a" * 24]["qualification"]) == ("True", "passed")
    assert (by_id["b" * 24]["passed"], by_id["b" * 24]["completed"]) == ("False", "False")
    page = admin.get(f"/p/{crowd_project.slug}/studies/{study.pk}/payments/")
    assert b"".join(page.streaming_content).decode().splitlines()[0].startswith("participant_id,")


def test_studies_api_makes_a_link(crowd_project, people, client_for):
    admin = client_for(people["admin"])
    answer = admin.post(f"/api/projects/{crowd_project.slug}/studies/",
                        {"name": "Round 1", "platform": "prolific"}, format="json")  # fmt: skip
    assert answer.status_code == 201
    body = answer.json()
    study = Study.objects.get(pk=body["id"])
    # Prolific's own placeholders, which it fills in for each participant.
    assert body["link"] == (
        f"http://testserver/p/{crowd_project.slug}/study/{study.token}/"
        "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert body["items_per_participant"] == 20 and len(body["completion_code"]) == 8
    listed = admin.get(f"/api/projects/{crowd_project.slug}/studies/").json()
    assert [s["id"] for s in listed] == [study.pk]
    bad = admin.post(f"/api/projects/{crowd_project.slug}/studies/",
                     {"name": "x", "platform": "zooniverse"}, format="json")  # fmt: skip
    assert bad.status_code == 400
    for who, status in (("validator", 403), ("outsider", 404)):
        c = client_for(people[who])
        made = c.post(f"/api/projects/{crowd_project.slug}/studies/",
                      {"name": "x", "platform": "prolific"}, format="json")  # fmt: skip
        assert made.status_code == status
        url = f"/api/projects/{crowd_project.slug}/studies/{study.pk}/payments/"
        assert c.get(url).status_code == status
