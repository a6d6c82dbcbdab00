import json
import re
import threading
from collections import Counter

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client

from annotation.errors import DomainError
from annotation.models import AuditLog, Lease, Perturbation, ValidationItem, ValidatorStatus, Vote
from annotation.validation.quality import agreement_of, validator_set_qualified
from annotation.validation.queue import next_item
from annotation.validation.stats import project_stats
from annotation.validation.votes import vote_cast
from tests.factories import ProjectFactory, member, submitted_perturbation

pytestmark = pytest.mark.django_db


@pytest.fixture
def crowd(project):  # type: ignore[no-untyped-def]
    return [member(project, f"val{i}", "validator") for i in range(8)]


@pytest.fixture
def no_controls(project):  # type: ignore[no-untyped-def]
    project.settings = {**project.settings, "control_rate": 0}
    project.save()
    return project


def vote_all(item, validators, labels):  # type: ignore[no-untyped-def]
    for validator, label in zip(validators, labels, strict=False):
        vote_cast(item=item, validator=validator, label=label)
    item.refresh_from_db()
    return item


@pytest.mark.parametrize(
    ("votes", "status", "majority"),
    [
        (["negative"] * 5, "accepted", "negative"),
        (["negative"] * 3 + ["positive"] * 2, "accepted", "negative"),
        (["positive"] * 3 + ["negative"] * 2, "disputed", "positive"),
        (["negative", "negative", "positive", "positive", "mixed"], "no_majority", ""),
        (["mixed"] * 3 + ["negative", "positive"], "no_majority", "mixed"),
    ],
    ids=["unanimous", "three of five", "other task label", "no majority", "extra label"],
)
def test_resolution_follows_the_majority(no_controls, people, crowd, votes, status, majority):
    perturbation = submitted_perturbation(no_controls, people["expert"])
    item = vote_all(perturbation.item, crowd, votes[:4])
    assert (
        item.status == "open" and Perturbation.objects.get(pk=perturbation.pk).status == "submitted"
    )
    item = vote_all(item, crowd[4:], votes[4:])
    perturbation.refresh_from_db()
    assert (item.status, perturbation.status, item.majority_label) == ("resolved", status, majority)


def test_queue_never_gives_own_item_or_the_same_item_twice(no_controls, people, crowd):
    author = member(no_controls, "both", "expert", "validator")
    own = submitted_perturbation(no_controls, author)
    other = submitted_perturbation(no_controls, people["expert"])
    item = next_item(project=no_controls, validator=author)
    assert item == other.item
    assert next_item(project=no_controls, validator=author) == item  # the lease holds it
    vote_cast(item=item, validator=author, label="negative")
    assert next_item(project=no_controls, validator=author) is None
    assert own.item.votes.count() == 0


def test_queue_prefers_items_closest_to_completion_then_oldest(no_controls, people, crowd):
    first, second, third = (submitted_perturbation(no_controls, people["expert"]) for _ in range(3))
    vote_all(third.item, crowd[:2], ["negative"] * 2)
    vote_all(second.item, crowd[:2], ["negative"] * 2)
    for validator in crowd[2:5]:
        assert next_item(project=no_controls, validator=validator) == second.item
    # second now has 2 votes and 3 leases: full. third is next.
    assert next_item(project=no_controls, validator=crowd[5]) == third.item
    assert first.item.votes.count() == 0


def test_vote_api_statuses(no_controls, people, crowd, client_for):
    author_validator = member(no_controls, "erin", "validator")  # erin is also the expert
    item = submitted_perturbation(no_controls, people["expert"]).item
    url = f"/api/projects/{no_controls.slug}/validation/{item.pk}/vote/"
    client = client_for(crowd[0])
    first = client.post(url, {"label": "negative", "flags": ["unclear"]}, format="json")
    assert first.status_code == 201
    again = client.post(url, {"label": "negative", "flags": ["unclear"]}, format="json")
    assert again.status_code == 200
    conflict = client.post(url, {"label": "positive"}, format="json")
    assert conflict.status_code == 409
    own = client_for(author_validator).post(url, {"label": "negative"}, format="json")
    assert own.status_code == 403
    bad = client_for(crowd[1]).post(url, {"label": "meh"}, format="json")
    assert bad.status_code == 400 and "Unknown label 'meh'" in bad.json()["detail"]
    assert Vote.objects.filter(item=item).count() == 1


def test_vote_without_lease_needs_free_capacity(no_controls, people, crowd):
    item = submitted_perturbation(no_controls, people["expert"]).item
    for validator in crowd[:5]:
        assert next_item(project=no_controls, validator=validator) == item

    with pytest.raises(DomainError, match="all the votes it needs") as refused:
        vote_cast(item=item, validator=crowd[5], label="negative")
    assert refused.value.status == 409
    vote_all(item, crowd[:5], ["negative"] * 5)
    assert item.status == "resolved" and not Lease.objects.exists()


def test_next_returns_204_when_nothing_is_left(no_controls, people, client_for):
    response = client_for(people["validator"]).get(
        f"/api/projects/{no_controls.slug}/validation/next/"
    )
    assert response.status_code == 204


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
        vote_cast(item=p.item, validator=honest[4], label="negative")
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
    vote_cast(item=item, validator=crowd[0], label="negative")
    item.refresh_from_db()
    assert item.counted_votes == 0
    url = f"/api/projects/{no_controls.slug}/validators/{crowd[0].username}/"
    response = client_for(people["admin"]).post(url, {"qualified": True}, format="json")
    assert response.status_code == 200
    item.refresh_from_db()
    assert item.counted_votes == 1
    assert AuditLog.objects.filter(action="validator_requalified").exists()


def test_controls_are_mixed_in_at_the_control_rate(project, people):
    project.settings = {**project.settings, "control_rate": 0.25}
    project.save()
    for _ in range(12):
        submitted_perturbation(project, people["expert"])
    controls = ValidationItem.objects.filter(project=project, control__isnull=False)
    assert controls.count() == 4  # 4 of 16 items
    control = controls.first()
    assert control.fields == control.control.fields and control.gold_label == control.control.label


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


def test_adjudication_accepts_under_majority_or_rejects(no_controls, people, crowd, client_for):
    disputed = [submitted_perturbation(no_controls, people["expert"]) for _ in range(2)]
    for p in disputed:
        vote_all(p.item, crowd, ["positive"] * 4 + ["negative"])
    admin = client_for(people["admin"])
    base = f"/api/projects/{no_controls.slug}/adjudicate"
    assert (
        admin.post(f"{base}/{disputed[0].pk}/", {"decision": "accept"}).json()["status"]
        == "accepted"
    )
    assert (
        admin.post(f"{base}/{disputed[1].pk}/", {"decision": "reject"}).json()["status"]
        == "rejected"
    )
    assert admin.post(f"{base}/{disputed[1].pk}/", {"decision": "accept"}).status_code == 409
    accepted = Perturbation.objects.get(pk=disputed[0].pk)
    assert (accepted.label, accepted.majority_label) == ("negative", "positive")
    assert AuditLog.objects.filter(action="adjudicated").count() == 2
    expert = client_for(people["expert"])
    assert expert.post(f"{base}/{disputed[0].pk}/", {"decision": "reject"}).status_code == 403


def test_author_sees_the_outcome_only_after_resolution(no_controls, people, crowd, client_for):
    perturbation = submitted_perturbation(no_controls, people["expert"])
    url = f"/api/projects/{no_controls.slug}/perturbations/{perturbation.pk}/"
    vote_all(perturbation.item, crowd, ["negative"] * 4)
    assert client_for(people["expert"]).get(url).json()["outcome"] is None
    vote_all(perturbation.item, crowd[4:], ["positive"])
    outcome = client_for(people["expert"]).get(url).json()["outcome"]
    assert outcome == {"majority_label": "negative", "votes": {"negative": 4, "positive": 1}}


SECRET_TEXT = "ZQX pivot original text"


def test_validators_never_see_intended_label_pivot_or_other_votes(
    project, people, crowd, client_for
):
    from tests.factories import ExampleFactory

    pivot = ExampleFactory(
        project=project, fields={"text": f"{SECRET_TEXT} good"}, label="positive"
    )
    project.settings = {**project.settings, "control_rate": 0}
    project.save()
    perturbation = submitted_perturbation(project, people["expert"], pivot=pivot, label="negative")
    perturbation.rationale = "RATIONALE-SECRET"
    perturbation.save()
    vote_all(perturbation.item, crowd[:2], ["mixed", "mixed"])
    viewer = crowd[2]
    api = client_for(viewer)
    responses = [api.get(f"/api/projects/{project.slug}/validation/next/")]
    body = responses[0].json()
    assert set(body) == {"item", "fields", "labels", "extra_labels", "flags"}
    assert body["fields"] == {"text": f"{SECRET_TEXT} bad"}
    page = Client()
    page.force_login(viewer)
    responses.append(page.get(f"/p/{project.slug}/validate/"))
    responses.append(page.get(f"/p/{project.slug}/"))
    responses.append(api.get(f"/api/projects/{project.slug}/"))
    for response in responses:
        text = response.content.decode()
        assert f"{SECRET_TEXT} good" not in text  # the pivot's text
        assert "RATIONALE-SECRET" not in text
        assert "erin" not in text  # the author
        assert not re.search(r"mixed\W+2|\"votes\"", text)  # other votes
    # The intended label may appear only as one of the choices, never marked as the answer.
    page_text = responses[1].content.decode()
    assert page_text.count('value="negative"') == 1 and "intended" not in page_text.lower()
    for path in ("stats/", "validators/", f"perturbations/{perturbation.pk}/"):
        assert api.get(f"/api/projects/{project.slug}/{path}").status_code == 403


@pytest.mark.django_db(transaction=True)
def test_concurrent_validators_give_every_item_exactly_its_votes():
    assert connection.vendor == "postgresql"
    project = ProjectFactory(settings={"control_rate": 0})
    experts = [member(project, f"author{i}", "expert") for i in range(2)]
    validators = [member(project, f"v{i}", "validator") for i in range(18)]
    validators += [member(project, "dual", "expert", "validator")]
    dual = validators[-1]
    items = [submitted_perturbation(project, experts[i % 2]).item for i in range(12)]
    own = submitted_perturbation(project, dual).item
    submitted: list[tuple[int, int]] = []
    errors: list[BaseException] = []

    def work(validator):  # type: ignore[no-untyped-def]
        try:
            while (item := next_item(project=project, validator=validator)) is not None:
                vote_cast(item=item, validator=validator, label="negative")
                submitted.append((item.pk, validator.pk))
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(v,)) for v in validators]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    votes = list(Vote.objects.values_list("item_id", "validator_id"))
    assert sorted(votes) == sorted(submitted)  # no submitted vote is missing
    assert len(set(votes)) == len(votes)  # nobody voted twice
    per_item = Counter(item_id for item_id, _ in votes)
    assert {per_item[item.pk] for item in [*items, own]} == {5}, per_item
    assert (own.pk, dual.pk) not in votes
    assert set(ValidationItem.objects.values_list("status", flat=True)) == {"resolved"}


def test_imported_responses_get_majorities_and_statistics(project, people, client_for):
    lines = [
        {"id": "x1", "fields": {"text": "Fine."}, "label_distribution": {
            "positive": ["w1", "w2", "w3"], "negative": ["w4"], "mixed": ["w5"]}},
        {"id": "x2", "fields": {"text": "Meh."}, "label_distribution": {
            "positive": ["w1", "w2"], "negative": ["w3", "w4"], "mixed": ["w5"]}},
    ]  # fmt: skip
    content = "\n".join(json.dumps(line) for line in lines).encode()
    response = client_for(people["admin"]).post(
        f"/api/projects/{project.slug}/import/votes/",
        {"file": SimpleUploadedFile("votes.jsonl", content)},
        format="multipart",
    )
    assert response.status_code == 201 and response.json() == {"imported": 2}
    items = {i.external_id: i for i in ValidationItem.objects.filter(project=project)}
    assert items["x1"].majority_label == "positive" and items["x2"].majority_label == ""
    stats = client_for(people["admin"]).get(f"/api/projects/{project.slug}/stats/").json()
    assert stats["per_split"]["test"]["items"] == 2
    assert stats["fleiss_kappa"] is not None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            {"id": "a", "fields": {"text": "x"}, "label_distribution": {"great": ["w1", "w2"]}},
            "unknown label 'great'",
        ),
        (
            {"id": "a", "fields": {"text": "x"}, "label_distribution": {"positive": ["w1"]}},
            "at least two responses",
        ),
        (
            {"id": "a", "fields": {"body": "x"}, "label_distribution": {"positive": ["w1", "w2"]}},
            "missing field 'text'",
        ),
        (
            {
                "id": "a",
                "fields": {"text": "x"},
                "label_distribution": {"positive": ["w1"], "negative": ["w1"]},
            },
            "answers twice",
        ),
        ({"fields": {"text": "x"}, "label_distribution": {"positive": ["w1", "w2"]}}, "missing id"),
    ],
)
def test_bad_vote_import_is_rejected_with_line_and_imports_nothing(
    project, people, client_for, line, message
):
    good = {"id": "ok", "fields": {"text": "y"}, "label_distribution": {"positive": ["w1", "w2"]}}
    content = f"{json.dumps(good)}\n{json.dumps(line)}".encode()
    response = client_for(people["admin"]).post(
        f"/api/projects/{project.slug}/import/votes/",
        {"file": SimpleUploadedFile("v.jsonl", content)},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["line"] == 2
    assert message in response.json()["errors"][0]["message"]
    assert not ValidationItem.objects.filter(project=project).exists()
