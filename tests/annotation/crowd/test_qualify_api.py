"""The retest over the API (issue 49, second walk, #6): `POST …/validators/{username}/` with
`{"action": "retest"}` gives a validator who failed the qualification test one more attempt, as
the Validators page's "Allow a retest" does; non-admins are refused before the payload is read."""

import pytest

from annotation.models import AuditLog, GoldItem, ValidatorStatus
from tests.annotation.crowd.conftest import answer_next, configure
from tests.annotation.crowd.test_admin_pages import fail_test

pytestmark = pytest.mark.django_db


def url(project, username: str) -> str:  # type: ignore[no-untyped-def]
    return f"/api/projects/{project.slug}/validators/{username}/"


def test_an_admin_gives_a_retest_over_the_api(crowd_project, workers, people, client_for):
    configure(crowd_project, qualification_items=2, qualification_min_accuracy=1.0)
    worker = workers[0]
    fail_test(crowd_project, worker)
    admin = client_for(people["admin"])
    answer = admin.post(url(crowd_project, worker.username), {"action": "retest"}, format="json")
    assert answer.status_code == 200
    assert answer.json() == {"validator": worker.username, "qualified": True,
                             "qualification": "pending"}  # fmt: skip
    (entry,) = AuditLog.objects.filter(action="qualification_retest")
    assert (entry.actor, entry.details["validator"]) == (people["admin"], worker.pk)
    listed = admin.get(f"/api/projects/{crowd_project.slug}/validators/").json()["results"]
    assert {v["validator"]: v["qualification"] for v in listed}.get(worker.username) == "pending"
    # The attempt is served, and passing it lets the validator work.
    served = [answer_next(crowd_project, worker) for _ in range(2)]
    assert all(isinstance(item, GoldItem) for item in served)
    status = ValidatorStatus.objects.get(project=crowd_project, validator=worker)
    assert (status.qualification, status.quiz_attempt) == ("passed", 2)
    # No second retest for one who passed: 409, and nothing recorded.
    again = admin.post(url(crowd_project, worker.username), {"action": "retest"}, format="json")
    assert again.status_code == 409 and "has not failed the test" in again.json()["detail"]
    assert AuditLog.objects.filter(action="qualification_retest").count() == 1


def test_qualified_still_works_and_answers_the_test_state(crowd_project, workers, people,
                                                          client_for):  # fmt: skip
    configure(crowd_project, qualification_items=2)
    admin = client_for(people["admin"])
    answer = admin.post(url(crowd_project, workers[1].username), {"qualified": False},
                        format="json")  # fmt: skip
    assert answer.status_code == 200
    assert answer.json() == {"validator": workers[1].username, "qualified": False,
                             "qualification": "pending"}  # fmt: skip


@pytest.mark.parametrize("body", [{}, {"qualified": True, "action": "retest"},
                                  {"action": "promote"}, {"action": None}])  # fmt: skip
def test_a_request_names_one_thing_to_do(crowd_project, workers, people, client_for, body):
    answer = client_for(people["admin"]).post(url(crowd_project, workers[0].username), body,
                                              format="json")  # fmt: skip
    assert answer.status_code == 400
    assert not AuditLog.objects.filter(action__startswith="validator_").exists()


def test_unknown_users_and_non_members_are_not_found(crowd_project, people, client_for):
    admin = client_for(people["admin"])
    for username in ("nobody", people["outsider"].username):
        answer = admin.post(url(crowd_project, username), {"action": "retest"}, format="json")
        assert answer.status_code == 404, username


@pytest.mark.parametrize("body", [{"action": "retest"}, {"action": 7}, "not json"])
def test_non_admins_are_refused_before_the_payload_is_read(crowd_project, workers, people,
                                                          client_for, body):  # fmt: skip
    configure(crowd_project, qualification_items=2, qualification_min_accuracy=1.0)
    fail_test(crowd_project, workers[0])
    target = url(crowd_project, workers[0].username)
    for who, status in (("validator", 403), ("expert", 403), ("outsider", 404), (None, 401)):
        client = client_for(people[who] if who else None)
        if isinstance(body, str):
            answer = client.post(target, body, content_type="text/plain")
        else:
            answer = client.post(target, body, format="json")
        assert answer.status_code == status, (who, body)
    status_ = ValidatorStatus.objects.get(project=crowd_project, validator=workers[0])
    assert status_.qualification == "failed"
