"""What the admin's pages and the participant's done page say under the crowd gates (issue 49
walk): a failed test reads as ended with a retest offered, the gold pool is filled when the
settings turn a gate on, a resumed pause stays on the payments record, test items count among
a study's items, and running out of items is said."""

import csv
import io
import re

import pytest
from django.test import Client

from annotation.crowd.services import studies
from annotation.models import AuditLog, GoldItem, Participant, ValidatorStatus
from annotation.validation.services.queue import next_item
from annotation.validation.services.votes import vote_cast
from tests.annotation.crowd.conftest import answer_next, configure, wrong_label
from tests.annotation.crowd.test_studies import arrive, label_one
from tests.annotation.projects.test_setup_pages import form_data
from tests.factories import ExampleFactory, ProjectFactory, member

pytestmark = pytest.mark.django_db


def admin_client(user):  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def row_of(page: str, username: str) -> str:
    (row,) = [r for r in page.split("<tr>") if f'<td data-label="Validator">{username}</td>' in r]
    return row


def fail_test(project, worker):  # type: ignore[no-untyped-def]
    for _ in range(2):
        item = next_item(project=project, validator=worker)
        vote_cast(project=project, item_id=item.pk, validator=worker, label=wrong_label(item))


def test_a_failed_validator_reads_ended_and_may_be_given_a_retest(crowd_project, workers, people):
    configure(crowd_project, qualification_items=2, qualification_min_accuracy=1.0)
    worker = workers[0]
    fail_test(crowd_project, worker)
    admin = admin_client(people["admin"])
    url = f"/p/{crowd_project.slug}/validators/"
    row = row_of(admin.get(url).content.decode(), worker.username)
    assert "ended (test failed)" in row
    assert ">qualified<" not in row and "Unqualify" not in row
    assert "Allow a retest" in row
    answer = admin.post(f"{url}{worker.pk}/qualify/", {"retest": "1"}, follow=True)
    assert "may take the test once more" in answer.content.decode()
    assert AuditLog.objects.filter(action="qualification_retest").count() == 1
    # One more attempt: test items again, and passing it lets the validator work.
    served = [answer_next(crowd_project, worker) for _ in range(2)]
    assert all(isinstance(item, GoldItem) for item in served)
    status = ValidatorStatus.objects.get(project=crowd_project, validator=worker)
    assert status.qualification == "passed"
    row = row_of(admin.get(url).content.decode(), worker.username)
    assert "ended" not in row and "Allow a retest" not in row


def test_a_retest_failed_again_ends_the_work_again(crowd_project, workers, people):
    configure(crowd_project, qualification_items=2, qualification_min_accuracy=1.0)
    worker = workers[0]
    fail_test(crowd_project, worker)
    admin = admin_client(people["admin"])
    url = f"/p/{crowd_project.slug}/validators/{worker.pk}/qualify/"
    admin.post(url, {"retest": "1"})
    fail_test(crowd_project, worker)
    assert next_item(project=crowd_project, validator=worker) is None
    status = ValidatorStatus.objects.get(project=crowd_project, validator=worker)
    assert (status.qualification, status.quiz_attempt) == ("failed", 2)
    # A validator who did not fail has no retest to give: the page says so, nothing changes;
    # someone who is no validator here is not found.
    answer = admin.post(f"/p/{crowd_project.slug}/validators/{workers[1].pk}/qualify/",
                        {"retest": "1"}, follow=True)  # fmt: skip
    assert "This validator has not failed the test." in answer.content.decode()
    assert AuditLog.objects.filter(action="qualification_retest").count() == 1
    outsider = people["outsider"]
    assert admin.post(f"/p/{crowd_project.slug}/validators/{outsider.pk}/qualify/",
                      {"retest": "1"}).status_code == 404  # fmt: skip


def settings_values(project):  # type: ignore[no-untyped-def]
    """What the Settings page shows of `project`, to post back with a change."""
    return {"name": project.name, "task_type": project.task_type, "fields": project.fields,
            "labels": project.labels, "extra_labels": project.extra_labels,
            "settings": project.settings, "tags": [], "guidelines": ""}  # fmt: skip


def test_saving_the_settings_with_a_gate_on_fills_the_pool(people, client_for):
    """The pool was filled only when the Studies page was opened (second walk, #7): now when the
    Settings page or the API saves a gate on, so that the test can draw before anyone looks."""
    project = ProjectFactory(slug="fresh")
    admin_user = member(project, "fresh-admin", "admin")
    labelled = 5
    for n in range(labelled):
        ExampleFactory(project=project, external_id=f"o{n}", label="positive",
                       fields={"text": f"Review {n}."})  # fmt: skip
    ExampleFactory(project=project, external_id="unlabelled", label="", fields={"text": "x"})
    admin = admin_client(admin_user)
    url = f"/p/{project.slug}/settings/"
    values = settings_values(project)
    saved = admin.post(url, form_data(values, setting_qualification_items=0), follow=True)
    assert "Project saved." in saved.content.decode()
    assert GoldItem.objects.filter(project=project).count() == 0  # no gate: nothing filled
    saved = admin.post(url, form_data(values, setting_qualification_items=3), follow=True)
    assert f"The gold pool holds {labelled} items" in saved.content.decode()
    assert GoldItem.objects.filter(project=project, kind="pool").count() == labelled
    page = admin.get(f"/p/{project.slug}/studies/").content.decode()
    assert f"The gold pool holds {labelled} items" in page and 'id="pool-empty"' not in page
    # The API's settings update does the same, for a gold rate alone.
    other = ProjectFactory(slug="fresh-api")
    api_admin = member(other, "api-admin", "admin")
    ExampleFactory(project=other, label="negative", fields={"text": "Dull."})
    api = client_for(api_admin)
    answer = api.patch(f"/api/projects/{other.slug}/", {"settings": {"gold_rate": 0.1}},
                       format="json")  # fmt: skip
    assert answer.status_code == 200
    assert GoldItem.objects.filter(project=other, kind="pool").count() == 1


def test_the_studies_page_says_an_empty_pool_cannot_feed_the_test(people):
    project = ProjectFactory(slug="bare")
    admin_user = member(project, "bare-admin", "admin")
    configure(project, qualification_items=3)
    page = admin_client(admin_user).get(f"/p/{project.slug}/studies/").content.decode()
    assert "holds 0 items" in page
    assert re.search(r'id="pool-empty">The pool is empty, so the test has no items', page)


def test_the_studies_page_says_test_items_count_among_a_participants_items(crowd_project, people):
    configure(crowd_project, qualification_items=3)
    page = admin_client(people["admin"]).get(f"/p/{crowd_project.slug}/studies/")
    text = page.content.decode()
    assert "test items and gold checks included" in text
    assert "with a 3-item test" in text


# The voters' counts are taken once the vote commits (transaction.on_commit).
@pytest.mark.django_db(transaction=True)
def test_payments_keep_that_a_resumed_participant_was_paused(crowd_project, people):
    configure(crowd_project, gold_min_count=1, gold_min_accuracy=0.5)
    study = studies.study_create(project=crowd_project, actor=people["admin"], name="Wave",
                                 platform="prolific", items_per_participant=4)  # fmt: skip
    arrive(Client(), study, pid="c" * 24)
    arrive(Client(), study, pid="d" * 24)
    paused, _ = (Participant.objects.get(external_id=x * 24).user for x in "cd")
    configure(crowd_project, gold_rate=1.0)
    answer_next(crowd_project, paused, right=False)  # 0 of 1 right: paused
    configure(crowd_project, gold_rate=0.0)
    assert ValidatorStatus.objects.get(project=crowd_project, validator=paused).paused
    admin = admin_client(people["admin"])
    answer = admin.post(f"/p/{crowd_project.slug}/validators/{paused.pk}/qualify/",
                        {"qualified": "1", "resume": "1"}, follow=True)  # fmt: skip
    assert "Validator resumed." in answer.content.decode()
    response = admin.get(f"/p/{crowd_project.slug}/studies/{study.pk}/payments/")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    by_id = {r["participant_id"]: r for r in rows}
    assert (by_id["c" * 24]["paused"], by_id["c" * 24]["was_paused"]) == ("False", "True")
    assert (by_id["d" * 24]["paused"], by_id["d" * 24]["was_paused"]) == ("False", "False")


def test_the_done_page_says_when_no_items_were_left(crowd_project, people):
    real_items = crowd_project.items.count()
    study = studies.study_create(project=crowd_project, actor=people["admin"], name="Long",
                                 platform="prolific",
                                 items_per_participant=real_items + 6)  # fmt: skip
    client = Client()
    arrive(client, study, pid="e" * 24)
    for _ in range(real_items):
        label_one(client, crowd_project)
    done = client.get(f"/p/{crowd_project.slug}/validate/")
    assert done.status_code == 302
    page = client.get(done.url).content.decode()
    assert "there were no more items for you to label" in page
    assert "you have labelled your items" not in page
    assert 'id="completion-code">' in page


def test_the_done_page_of_a_full_quota_says_the_items_are_labelled(crowd_project, people):
    study = studies.study_create(project=crowd_project, actor=people["admin"], name="Short",
                                 platform="prolific", items_per_participant=2)  # fmt: skip
    client = Client()
    arrive(client, study, pid="f" * 24)
    for _ in range(2):
        label_one(client, crowd_project)
    done = client.get(f"/p/{crowd_project.slug}/validate/")
    page = client.get(done.url).content.decode()
    assert "you have labelled your items" in page and "no more items" not in page
