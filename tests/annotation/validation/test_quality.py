import pytest

from annotation.models import AuditLog, ValidationItem, ValidatorStatus, Vote
from annotation.validation.services.quality import agreement_of, validator_set_qualified
from annotation.validation.services.queue import next_item
from annotation.validation.services.votes import vote_cast
from annotation.validation.stats import project_stats
from tests.factories import submitted_perturbation, vote_all

pytestmark = pytest.mark.django_db


# The voters' counts are taken once the vote commits (transaction.on_commit).
@pytest.mark.django_db(transaction=True)
def test_unqualify_reopens_items_and_they_resolve_again(no_controls, people, crowd):
    no_controls.settings = {**no_controls.settings, "validator_min_votes": 3}
    no_controls.save()
    contrarian, honest = crowd[0], crowd[1:6]
    perturbations = [submitted_perturbation(no_controls, people["expert"]) for _ in range(3)]
    for p in perturbations:
        # The contrarian always disagrees; four honest votes still make a majority.
        vote_all(p.item, [contrarian, *honest[:4]], ["positive"] + ["negative"] * 4)
    # After the third resolved item the contrarian passed min votes with 100% disagreement.
    status = ValidatorStatus.objects.get(project=no_controls, validator=contrarian)
    assert status.qualified is False
    (unqualified,) = AuditLog.objects.filter(action="validator_unqualified")
    assert unqualified.details["agreement"] == 0.0
    # Its items reopened, so no vote of it is on a resolved item any more.
    assert (status.resolved_votes, agreement_of(status)) == (0, None)
    for p in perturbations:
        p.item.refresh_from_db()
        p.refresh_from_db()
        assert (p.item.status, p.item.counted_votes, p.status) == ("open", 4, "submitted")
    for p in perturbations:
        assert next_item(project=no_controls, validator=honest[4]) == p.item
        vote_cast(project=p.item.project, item_id=p.item.pk, validator=honest[4], label="negative")
        p.item.refresh_from_db()
        p.refresh_from_db()
        assert (p.item.status, p.item.counted_votes, p.status) == ("resolved", 5, "accepted")
    assert not Vote.objects.filter(validator=contrarian, counts=True).exists()
    assert Vote.objects.filter(validator=contrarian).count() == 3  # kept, never dropped
    assert_counts_match_votes(no_controls)


def assert_counts_match_votes(project):  # type: ignore[no-untyped-def]
    """The running agreement counts equal a recount from the Vote rows of resolved items."""
    for status in ValidatorStatus.objects.filter(project=project):
        on_resolved = Vote.objects.filter(
            item__project=project, validator=status.validator, item__status="resolved"
        )
        agreed = [v for v in on_resolved.select_related("item") if v.label == v.item.majority_label]
        assert (status.resolved_votes, status.agreed_votes) == (on_resolved.count(), len(agreed))


def test_admin_can_requalify(no_controls, people, crowd, client_for):
    validator_set_qualified(
        project=no_controls, validator_id=crowd[0].pk, qualified=False, actor=people["admin"]
    )
    item = submitted_perturbation(no_controls, people["expert"]).item
    vote_cast(project=item.project, item_id=item.pk, validator=crowd[0], label="negative")
    item.refresh_from_db()
    assert item.counted_votes == 0
    url = f"/api/projects/{no_controls.slug}/validators/{crowd[0].username}/"
    response = client_for(people["admin"]).post(url, {"qualified": True}, format="json")
    assert response.status_code == 200
    item.refresh_from_db()
    assert item.counted_votes == 1
    assert AuditLog.objects.filter(action="validator_requalified").exists()


def test_controls_never_count_as_perturbations_in_an_authors_figures(project, people, crowd):
    project.settings = {**project.settings, "control_rate": 0.5}
    project.save()
    perturbation = submitted_perturbation(project, people["expert"])
    control = ValidationItem.objects.get(control=perturbation.pivot)
    vote_all(control, crowd, ["positive"] * 5)
    vote_all(perturbation.item, crowd, ["negative"] * 5)
    stats = project_stats(project)
    assert stats["experts"] == [
        {"expert": "erin", "submitted": 1, "drafts": 0, "accepted": 1, "acceptance": 1.0}
    ]
    assert stats["human_accuracy"]["controls"] == {"items": 1, "accuracy": 1.0}
    assert stats["human_accuracy"]["perturbations"] == {"items": 1, "accuracy": 1.0}


def test_median_seconds_per_vote_equal_pythons_median(no_controls, people, crowd, client_for):
    """The dashboard's medians come from PostgreSQL's percentile_cont; they must equal
    statistics.median over the same votes, for odd and even counts alike."""
    import statistics

    from annotation.validation.services.votes import vote_cast
    from tests.factories import submitted_perturbation

    spent = {crowd[0].pk: [3, 10, 4, 8], crowd[1].pk: [7, 1, 30], crowd[2].pk: [5]}
    items = [submitted_perturbation(no_controls, people["expert"]).item for _ in range(4)]
    for validator in crowd[:3]:
        for item, seconds in zip(items, spent[validator.pk], strict=False):
            vote_cast(
                project=item.project,
                item_id=item.pk,
                validator=validator,
                label="negative",
                seconds_spent=seconds,
            )
    stats = client_for(people["admin"]).get(f"/api/projects/{no_controls.slug}/stats/").json()
    shown = {v["id"]: v["median_seconds"] for v in stats["validators"]}
    assert shown == {v: statistics.median(s) for v, s in spent.items()}
    everything = [s for values in spent.values() for s in values]
    assert stats["median_seconds"]["vote"] == statistics.median(everything)


def test_only_a_member_of_the_project_can_be_qualified(project, people, client_for):
    """A project admin could once 'qualify' anyone (a status row appeared for a user of another
    project), and an unknown username answered differently from an existing one."""
    from django.test import Client

    admin = client_for(people["admin"])
    answers = []
    for username in ("olga", "nobody-at-all"):  # another project's member; no such user
        url = f"/api/projects/{project.slug}/validators/{username}/"
        response = admin.post(url, {"qualified": False}, format="json")
        answers.append((response.status_code, response.json()))
    assert answers[0] == answers[1] == (404, {"detail": "No such validator in this project."})
    page = Client()
    page.force_login(people["admin"])
    outsider = people["outsider"].pk
    form = page.post(f"/p/{project.slug}/validators/{outsider}/qualify/", {"qualified": "0"})
    assert form.status_code == 404
    assert not ValidatorStatus.objects.filter(project=project).exists()
    victor = f"/api/projects/{project.slug}/validators/victor/"
    assert admin.post(victor, {"qualified": False}, format="json").status_code == 200
    assert (
        ValidatorStatus.objects.get(project=project, validator=people["validator"]).qualified
        is False
    )
