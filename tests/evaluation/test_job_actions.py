"""One API view cancels and retries every kind of job (annotation/jobs/api.py): an import under
its project's route (slug and id), a run and an analysis under theirs (id alone) answer alike,
and who asks is checked before the action named or the request's body is read."""

import pytest

from annotation.models import ImportJob
from evaluation.models import Analysis, ModelSpec
from evaluation.runs.services import evaluation_enqueue

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued_jobs(project, released):  # type: ignore[no-untyped-def]
    """A queued job of each kind, by the URL its API answers at."""
    imported = ImportJob.objects.create(project=project, kind=ImportJob.Kind.ORIGINALS)
    model = ModelSpec.objects.create(
        project=project, name="m", kind="python", source="tests.evaluation.rule_models:keyword"
    )
    run = evaluation_enqueue(release=released, model=model, split="test", user=None, send=False)
    analysis = Analysis.objects.create(
        project=project, kind=Analysis.Kind.ARTIFACTS, params={"release": released.pk}
    )
    return {
        f"/api/projects/{project.slug}/imports/{imported.pk}/": imported,
        f"/api/evaluations/{run.pk}/": run,
        f"/api/analyses/{analysis.pk}/": analysis,
    }


def test_an_admin_cancels_and_retries_an_import_a_run_and_an_analysis_alike(
    queued_jobs, people, client_for
):
    admin = client_for(people["admin"])
    for url, job in queued_jobs.items():
        # A body is no part of the action: it cannot set the status it answers with.
        cancelled = admin.post(f"{url}cancel/", {"status": "succeeded"}, format="json")
        assert cancelled.status_code == 200, (url, cancelled.content)
        answer = cancelled.json()
        assert answer.get("id", answer.get("job")) == job.pk and answer["status"] == "cancelled"
        job.refresh_from_db()
        assert job.status == "cancelled" and job.finished_at is not None
        retried = admin.post(f"{url}retry/")
        assert retried.status_code == 200 and retried.json()["status"] == "queued", url
        assert admin.get(url).json()["status"] == "queued"  # its own GET sees the same job


def test_a_retry_of_a_job_that_has_not_finished_is_refused_with_the_reason(
    queued_jobs, people, client_for
):
    admin = client_for(people["admin"])
    for url, job in queued_jobs.items():
        refused = admin.post(f"{url}retry/")
        assert refused.status_code == 409, url
        assert refused.json()["detail"] == "Only a finished job can run again."
        job.refresh_from_db()
        assert job.status == "queued"


@pytest.mark.parametrize("who", ["validator", "expert", "outsider"])
def test_who_may_not_act_on_a_job_is_refused_before_the_action_is_read(
    queued_jobs, people, client_for, who
):
    """The import route takes the action from the URL: an action that does not exist is 404 for
    an admin, and the project's refusal for anyone else, exactly as cancel is."""
    client = client_for(people[who])
    admin = client_for(people["admin"])
    for url, job in queued_jobs.items():
        answers = {
            action: client.post(f"{url}{action}/", {"status": "cancelled"}, format="json")
            for action in ("cancel", "retry")
        }
        assert {a.status_code for a in answers.values()} <= {403, 404}, url
        job.refresh_from_db()
        assert job.status == "queued"
        if "/imports/" in url:
            assert admin.post(f"{url}pause/").status_code == 404
            unknown = client.post(f"{url}pause/")
            assert unknown.status_code == answers["cancel"].status_code
            assert unknown.json() == answers["cancel"].json()
