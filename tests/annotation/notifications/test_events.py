"""Notifications are made where the project's events happen, once they commit: the author is
told of their perturbation disputed, decided or sent back; the one who started an import, run
or analysis that it finished; every member of a release. A validator is told nothing about an
item, and no notification names a vote count or a validator."""

import pytest

from annotation.imports.tasks import run_import_task
from annotation.models import ImportJob, Notification
from annotation.notifications import services
from annotation.validation.services.adjudication import perturbation_adjudicate
from annotation.validation.services.quality import items_send_back
from evaluation.analyses.tasks import run_analysis_task
from evaluation.models import Analysis, EvaluationRun, ModelSpec
from evaluation.runs.tasks import run_evaluation_task
from tests.factories import member, released_contrast_sets, submitted_perturbation, vote_all

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def committed(django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    """Run `work` and what it leaves for after its commit, as a committed request would."""

    def run(work):  # type: ignore[no-untyped-def]
        with django_capture_on_commit_callbacks(execute=True):
            return work()

    return run


def told(user):  # type: ignore[no-untyped-def]
    return list(Notification.objects.filter(user=user).order_by("pk").values_list("kind", "text"))


@pytest.fixture
def validators(project):  # type: ignore[no-untyped-def]
    return [member(project, f"val{n}", "validator") for n in range(5)]


def test_the_author_is_told_of_a_dispute_and_no_validator_of_anything(
    project, people, validators, committed
):
    perturbation = submitted_perturbation(project, people["expert"], label="negative")
    committed(lambda: vote_all(perturbation.item, validators, ["positive"] * 5))
    assert told(people["expert"]) == [
        (
            "perturbation.disputed",
            f"Your perturbation #{perturbation.pk} in {project.name} was disputed by the "
            "validators.",
        )
    ]
    assert Notification.objects.filter(user__in=validators).count() == 0
    assert Notification.objects.filter(user=people["admin"]).count() == 0


def test_the_author_is_told_of_an_acceptance_and_of_an_admins_decision(
    project, people, validators, committed
):
    accepted = submitted_perturbation(project, people["expert"], label="negative")
    committed(lambda: vote_all(accepted.item, validators, ["negative"] * 5))
    disputed = submitted_perturbation(project, people["expert"], label="negative")
    committed(lambda: vote_all(disputed.item, validators, ["positive"] * 5))
    disputed.refresh_from_db()
    committed(
        lambda: perturbation_adjudicate(
            perturbation=disputed, admin=people["admin"], decision="reject"
        )
    )
    kinds = [(kind, text.rsplit(" ", 4)[-4:]) for kind, text in told(people["expert"])]
    assert kinds == [
        ("perturbation.decided", ["accepted", "by", "the", "validators."]),
        ("perturbation.disputed", ["disputed", "by", "the", "validators."]),
        ("perturbation.decided", ["rejected", "by", "an", "admin."]),
    ]


def test_the_author_is_told_of_a_perturbation_sent_back(project, people, validators, committed):
    perturbation = submitted_perturbation(project, people["expert"], label="negative")
    committed(lambda: vote_all(perturbation.item, validators, ["negative"] * 5))
    committed(
        lambda: items_send_back(item_ids=[perturbation.item.pk], clear_votes=True, extra_votes=0)
    )
    assert told(people["expert"])[-1] == (
        "perturbation.sent_back",
        f"Your perturbation #{perturbation.pk} in {project.name} was sent back to validation.",
    )


def test_a_release_tells_every_member_its_version_alone(project, people, committed):
    release = committed(lambda: released_contrast_sets(project, people))
    text = f"Release 1.0 of {project.name} was published."
    for role in ("admin", "expert", "validator"):
        assert told(people[role]) == [("release.published", text)]
    assert told(people["outsider"]) == []
    row = Notification.objects.filter(user=people["validator"]).get()
    assert row.url == f"/p/{project.slug}/releases/{release.pk}/"


def test_a_failed_run_tells_its_starter(project, people, committed):
    release = released_contrast_sets(project, people)
    spec = ModelSpec.objects.create(
        project=project, name="broken", kind="python", source="no.such:f"
    )
    run = EvaluationRun.objects.create(
        release=release, model=spec, split="test", created_by=people["admin"]
    )
    committed(lambda: run_evaluation_task.apply(args=(run.pk,)))
    kind, text = told(people["admin"])[-1]
    assert kind == "run.finished"
    assert text.startswith(f"Your run of broken in {project.name} failed. ")


def test_a_workers_import_tells_its_starter(project, people, committed):
    job = ImportJob.objects.create(project=project, kind="votes", created_by=people["admin"])
    committed(lambda: run_import_task.apply(args=(job.pk,)))
    kind, text = told(people["admin"])[-1]
    assert kind == "import.finished"
    assert text.startswith(f"Your import in {project.name} failed.")  # its file is gone
    assert Notification.objects.get(user=people["admin"]).url.endswith(f"/imports/{job.pk}/")


def test_a_failed_analysis_tells_its_starter(project, people, committed):
    analysis = Analysis.objects.create(
        project=project, kind="instability", params={"runs": []}, created_by=people["expert"]
    )
    committed(lambda: run_analysis_task.apply(args=(analysis.pk,)))
    analysis.refresh_from_db()
    assert analysis.status in ("succeeded", "failed")
    kind, text = told(people["expert"])[-1]
    assert kind == "analysis.finished"
    assert text.startswith(f"Your instability analysis in {project.name} {analysis.status}.")


def test_a_kind_turned_off_is_not_made(project, people, validators, committed):
    services.preferences_save(user=people["expert"], kinds=["release.published"], email=False)
    perturbation = submitted_perturbation(project, people["expert"], label="negative")
    committed(lambda: vote_all(perturbation.item, validators, ["positive"] * 5))
    assert told(people["expert"]) == []


def test_a_comment_tells_the_author_and_the_mentioned_who_may_read_it(
    project, people, validators, committed
):
    from annotation.comments.services import comment_posted

    perturbation = submitted_perturbation(project, people["expert"], label="negative")
    voted, unvoted = validators[0], validators[1]
    other_expert = member(project, "ezra", "expert")  # reads the threads that mention them
    other_admin = member(project, "adam", "admin")
    committed(lambda: vote_all(perturbation.item, [voted], ["negative"]))
    body = (
        f"Why? @{voted.username} @{unvoted.username} @erin @ezra @alice @adam @{people['outsider']}"
    )
    committed(lambda: comment_posted(perturbation=perturbation, author=people["admin"], body=body))
    assert told(people["expert"]) == [
        (
            "perturbation.commented",
            f"A comment on your perturbation #{perturbation.pk} in {project.name}.",
        )
    ]
    mention = (
        f"You were mentioned in a comment on perturbation #{perturbation.pk} in {project.name}."
    )
    assert told(voted) == [("mention", mention)] and told(other_admin) == [("mention", mention)]
    assert told(other_expert) == [("mention", mention)]
    assert told(unvoted) == []  # blind: they may still vote on it
    assert told(people["outsider"]) == []
    assert told(people["admin"]) == []  # the comment's author, mentioning themself
    assert "alice" not in mention  # the comment's author is named to nobody
