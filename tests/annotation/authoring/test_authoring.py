import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from annotation.authoring.services.claims import pivot_claim, pivot_sample
from annotation.authoring.services.drafts import perturbation_save
from annotation.errors import DomainError
from annotation.models import AuditLog, Claim, Perturbation, Tag, ValidationItem
from annotation.projects.services import guidelines_publish
from tests.factories import (
    ExampleFactory,
    ProjectFactory,
    UserFactory,
    member,
    submitted_perturbation,
)

pytestmark = pytest.mark.django_db

PIVOT_TEXT = "The film was good and the cast was great."
EDIT = "The film was bad and the cast was great."


@pytest.fixture
def pivot(project):  # type: ignore[no-untyped-def]
    return ExampleFactory(project=project, external_id="p1", fields={"text": PIVOT_TEXT})


def submission(**overrides):  # type: ignore[no-untyped-def]
    return {
        "pivot": "p1",
        "fields": {"text": EDIT},
        "label": "negative",
        "tags": ["intensity"],
        "rationale": "good -> bad",
        "seconds_spent": 30,
        "submit": True,
        **overrides,
    }


def post(client, project, payload):  # type: ignore[no-untyped-def]
    return client.post(f"/api/projects/{project.slug}/perturbations/", payload, format="json")


def test_expert_submits_a_perturbation_and_it_enters_validation(project, pivot, people, client_for):
    guidelines_publish(project=project, text="v1")
    guidelines_publish(project=project, text="v2")
    response = post(client_for(people["expert"]), project, submission())
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["status"] == "submitted" and body["tags"] == ["intensity"]
    assert body["guideline_version"] == 2
    assert body["edit_distance"] == pytest.approx(1 / 10)  # good -> bad, of 10 tokens
    assert body["outcome"] is None
    item = ValidationItem.objects.get(perturbation_id=body["id"])
    assert (item.gold_label, item.split, item.fields) == ("negative", "test", {"text": EDIT})


REJECTIONS = [
    ({"fields": {"text": PIVOT_TEXT.replace(" ", "  ")}}, 400, "identical to its original"),
    ({"label": "neutral"}, 400, "Unknown label 'neutral'"),
    ({"label": "positive"}, 400, "must differ from the original's (positive)"),
    ({"label": ""}, 400, "Choose the intended label"),
    ({"tags": []}, 400, "Choose at least one tag"),
    ({"tags": ["sarcasm"]}, 400, "Unknown tag 'sarcasm'"),
    (
        {"fields": {"text": "Completely different words here now, friends."}},
        400,
        "the limit is 50%",
    ),
    ({"fields": {"body": "x"}}, 400, "Unknown field 'body'"),
]


@pytest.mark.parametrize(("change", "status", "message"), REJECTIONS)
def test_api_rejects_each_rule_with_its_own_message(
    project, pivot, people, client_for, change, status, message
):
    response = post(client_for(people["expert"]), project, submission(**change))
    assert response.status_code == status
    assert message in response.json()["detail"]
    assert not Perturbation.objects.filter(status="submitted").exists()


@pytest.mark.parametrize(("change", "status", "message"), REJECTIONS)
def test_service_rejects_each_rule_with_the_same_message(
    project, pivot, people, change, status, message
):
    values = submission(**change)
    values.pop("pivot")
    with pytest.raises(DomainError, match=message.replace("(", r"\(").replace(")", r"\)")):
        perturbation_save(author=people["expert"], pivot=pivot, **values)


def test_duplicate_of_a_sibling_is_rejected(project, pivot, people, client_for):
    other = member(project, "eve", "expert")
    Claim.objects.all().delete()
    assert post(client_for(other), project, submission()).status_code == 201
    Claim.objects.all().delete()
    response = post(client_for(people["expert"]), project, submission())
    assert response.status_code == 400
    assert "already has this text" in response.json()["detail"]


def test_read_only_field_cannot_change(db, client_for):
    nli = ProjectFactory(
        slug="nli",
        fields=[
            {"name": "premise", "kind": "text", "editable": False},
            {"name": "hypothesis", "kind": "text", "editable": True},
        ],
        labels=["entailment", "contradiction"],
    )
    nli.tags.create(name="negation")
    expert = member(nli, "nina", "expert")
    ExampleFactory(
        project=nli,
        external_id="n1",
        fields={"premise": "A dog runs.", "hypothesis": "An animal runs."},
        label="entailment",
    )
    payload = {
        "pivot": "n1",
        "fields": {"premise": "A cat runs.", "hypothesis": "An animal does not run."},
        "label": "contradiction",
        "tags": ["negation"],
        "submit": True,
    }
    response = client_for(expert).post("/api/projects/nli/perturbations/", payload, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "detail": "Field 'premise' is read-only and must stay as in the pivot.",
        "field": "premise",
    }
    payload["fields"] = {"hypothesis": "An animal does not run."}
    response = client_for(expert).post("/api/projects/nli/perturbations/", payload, format="json")
    assert response.status_code == 201
    assert response.json()["fields"]["premise"] == "A dog runs."


def test_label_may_stay_when_the_project_allows_it(project, pivot, people, client_for):
    project.settings = {**project.settings, "require_label_change": False}
    project.save()
    response = post(client_for(people["expert"]), project, submission(label="positive"))
    assert response.status_code == 201


def test_admin_can_allow_a_large_edit(project, pivot, people, client_for):
    big = {"text": "Completely different words here now, friends."}
    expert = client_for(people["expert"])
    draft = post(expert, project, submission(fields=big, submit=False)).json()
    url = f"/api/projects/{project.slug}/perturbations/{draft['id']}/"
    assert "the limit is 50%" in expert.patch(url, {"submit": True}, format="json").json()["detail"]
    assert expert.patch(url, {"allow_large_edit": True}, format="json").status_code == 403
    admin = client_for(people["admin"])
    assert admin.patch(url, {"allow_large_edit": True}, format="json").status_code == 200
    response = expert.patch(url, {"submit": True}, format="json")
    assert response.status_code == 200 and response.json()["status"] == "submitted"


def test_expired_claim_held_by_another_expert_is_refused(project, pivot, people, client_for):
    expert = client_for(people["expert"])
    draft = post(expert, project, submission(submit=False)).json()
    Claim.objects.filter(example=pivot).update(
        opened_at=timezone.now() - timedelta(hours=3),
        expires_at=timezone.now() - timedelta(hours=1),
    )
    rival = member(project, "rex", "expert")
    pivot_claim(pivot=pivot, expert=rival)
    url = f"/api/projects/{project.slug}/perturbations/{draft['id']}/"
    response = expert.patch(url, {"submit": True}, format="json")
    assert response.status_code == 409
    assert "expired and another expert now holds it" in response.json()["detail"]
    assert "rex" not in response.json()["detail"]  # experts never learn who holds a pivot


def test_live_claim_blocks_other_experts_but_not_its_holder(project, pivot, people, client_for):
    url = f"/api/projects/{project.slug}/examples/p1/claim/"
    assert client_for(people["expert"]).post(url).status_code == 200
    assert client_for(people["expert"]).post(url).status_code == 200
    rival = client_for(member(project, "rex", "expert"))
    response = rival.post(url)
    assert response.status_code == 409
    assert "Another expert holds this pivot" in response.json()["detail"]
    assert "erin" not in response.json()["detail"]
    Claim.objects.update(
        opened_at=timezone.now() - timedelta(hours=3),
        expires_at=timezone.now() - timedelta(seconds=1),
    )
    assert rival.post(url).status_code == 200


def test_pivot_holds_at_most_max_perturbations(project, pivot, people, client_for):
    project.settings = {**project.settings, "max_perturbations_per_pivot": 2}
    project.save()
    expert = client_for(people["expert"])
    for word in ("bad", "awful"):
        text = PIVOT_TEXT.replace("good", word)
        assert post(expert, project, submission(fields={"text": text})).status_code == 201
    response = post(
        expert, project, submission(fields={"text": PIVOT_TEXT.replace("good", "dull")})
    )
    assert response.status_code == 400
    assert "already has 2 perturbations (the limit)" in response.json()["detail"]
    rival = client_for(member(project, "rex", "expert"))
    Claim.objects.all().delete()
    assert rival.post(f"/api/projects/{project.slug}/examples/p1/claim/").status_code == 409


def test_drafts_keep_revisions_and_freeze_on_submit(project, pivot, people, client_for):
    expert = client_for(people["expert"])
    draft = post(expert, project, submission(submit=False, label="", tags=[])).json()
    assert draft["status"] == "draft"
    url = f"/api/projects/{project.slug}/perturbations/{draft['id']}/"
    expert.patch(url, {"label": "negative"}, format="json")
    expert.patch(url, {"tags": ["intensity"], "submit": True}, format="json")
    perturbation = Perturbation.objects.get(pk=draft["id"])
    assert perturbation.status == "submitted"
    assert [r.label for r in perturbation.revisions.all()] == ["", "negative"]
    response = expert.patch(url, {"fields": {"text": EDIT.replace("bad", "poor")}}, format="json")
    assert response.status_code == 409 and "frozen" in response.json()["detail"]


def test_seconds_spent_is_capped_by_the_server_clock(project, pivot, people):
    pivot_claim(pivot=pivot, expert=people["expert"])
    Claim.objects.update(opened_at=timezone.now() - timedelta(seconds=40))
    values = submission(seconds_spent=100_000)
    values.pop("pivot")
    perturbation = perturbation_save(author=people["expert"], pivot=pivot, **values)
    assert 40 <= perturbation.wall_seconds < 60
    assert perturbation.seconds_spent == perturbation.wall_seconds
    assert not Claim.objects.exists()  # submitting releases the pivot
    pivot_claim(pivot=pivot, expert=people["expert"])
    Claim.objects.update(opened_at=timezone.now() - timedelta(seconds=30))
    values["fields"] = {"text": PIVOT_TEXT.replace("good", "poor")}
    values["seconds_spent"] = 25
    second = perturbation_save(author=people["expert"], pivot=pivot, **values)
    assert second.seconds_spent == 25


def test_experts_see_only_their_own_perturbations_and_admins_see_all(
    project, pivot, people, client_for
):
    mine = post(client_for(people["expert"]), project, submission(submit=False)).json()
    rival = member(project, "rex", "expert")
    url = f"/api/projects/{project.slug}/perturbations/{mine['id']}/"
    assert client_for(rival).get(url).status_code == 404
    assert client_for(rival).patch(url, {"label": "x"}, format="json").status_code == 404
    assert client_for(people["admin"]).get(url).status_code == 200
    listing = client_for(rival).get(f"/api/projects/{project.slug}/perturbations/").json()
    assert listing["count"] == 0
    assert client_for(people["validator"]).get(url).status_code == 403


def test_withdraw_only_before_validation_starts(project, pivot, people, client_for):
    from annotation.validation.services.votes import vote_cast

    expert = client_for(people["expert"])
    first = post(expert, project, submission()).json()
    url = f"/api/projects/{project.slug}/perturbations/{first['id']}/"
    assert expert.patch(url, {"status": "withdrawn"}, format="json").json()["status"] == "withdrawn"
    assert ValidationItem.objects.get(perturbation_id=first["id"]).status == "closed"

    second = post(expert, project, submission(fields={"text": EDIT.replace("great", "fine")}))
    item = ValidationItem.objects.get(perturbation_id=second.json()["id"])
    vote_cast(
        project=item.project, item_id=item.pk, validator=people["validator"], label="negative"
    )
    url = f"/api/projects/{project.slug}/perturbations/{second.json()['id']}/"
    response = expert.patch(url, {"status": "withdrawn"}, format="json")
    assert response.status_code == 409


def test_pivot_browser_filters_search_and_paginates(project, people, client_for):
    for n in range(60):
        ExampleFactory(
            project=project,
            external_id=f"e{n}",
            fields={"text": f"review {n} {'lovely' if n % 10 == 0 else 'plain'}"},
            label="positive" if n % 2 else "negative",
            split="dev" if n >= 55 else "test",
        )
    client = client_for(people["expert"])
    url = f"/api/projects/{project.slug}/examples/"
    body = client.get(url).json()
    assert body["count"] == 55 and len(body["results"]) == 50  # default split: test
    assert {r["split"] for r in body["results"]} == {"test"}
    assert client.get(url, {"split": "dev"}).json()["count"] == 5
    assert client.get(url, {"label": "positive"}).json()["count"] == 27
    assert [r["id"] for r in client.get(url, {"search": "LOVELY"}).json()["results"]] == [
        "e0", "e10", "e20", "e30", "e40", "e50",
    ]  # fmt: skip
    written = {"pivot": "e0", "fields": {"text": "review 0 awful"}, "label": "positive"}
    assert post(client, project, submission(**written)).status_code == 201
    unused = client.get(url, {"unused": "true", "search": "lovely"}).json()
    assert [r["id"] for r in unused["results"]] == ["e10", "e20", "e30", "e40", "e50"]
    # Submitting released the claim, so nobody sees e0 as claimed any more.
    assert client.get(url, {"search": "review 0 "}).json()["results"][0]["claimed_by"] is None
    assert client.get(url, {"page": 2}).json()["results"][0]["id"] == "e50"


def test_sampling_claims_unclaimed_pivots_and_balances_labels(project, people):
    for n in range(6):
        ExampleFactory(
            project=project, external_id=f"s{n}", label="positive" if n < 4 else "negative"
        )
    expert = people["expert"]
    claim = pivot_sample(project=project, expert=expert, split="test", strategy="random")
    assert claim.expert == expert and claim.is_live()
    # Label-balanced: both labels have no perturbations yet, then negative has fewer.
    text = "The film number 5 was bad."
    perturbation_save(
        author=expert, pivot=project.examples.get(external_id="s0"),
        fields={"text": text}, label="negative", tags=["negation"], submit=True,
    )  # fmt: skip
    balanced = pivot_sample(project=project, expert=expert, split="test", strategy="balanced")
    assert balanced.example.label == "negative"
    with pytest.raises(DomainError, match="Unknown sampling strategy"):
        pivot_sample(project=project, expert=expert, split="test", strategy="weird")
    with pytest.raises(DomainError, match="No pivot of the dev split has room"):
        pivot_sample(project=project, expert=expert, split="dev", strategy="random")


@pytest.mark.django_db(transaction=True)
def test_two_experts_claiming_one_pivot_at_once_exactly_one_wins():
    assert connection.vendor == "postgresql"
    project = ProjectFactory()
    pivot = ExampleFactory(project=project)
    experts = [member(project, f"racer{i}", "expert") for i in range(2)]
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def claim(expert):  # type: ignore[no-untyped-def]
        barrier.wait()
        try:
            pivot_claim(pivot=pivot, expert=expert)
            outcomes.append("won")
        except DomainError:
            outcomes.append("lost")
        finally:
            connection.close()

    for _ in range(10):
        Claim.objects.all().delete()
        outcomes.clear()
        threads = [threading.Thread(target=claim, args=(e,)) for e in experts]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcomes) == ["lost", "won"]
        assert Claim.objects.filter(example=pivot).count() == 1


def test_validators_cannot_browse_pivots_or_write(project, pivot, people, client_for):
    client = client_for(people["validator"])
    assert client.get(f"/api/projects/{project.slug}/examples/").status_code == 403
    assert client.post(f"/api/projects/{project.slug}/examples/p1/claim/").status_code == 403
    assert post(client, project, submission()).status_code == 403
    assert UserFactory(username="nobody")  # outsiders are covered by the permission matrix


def test_next_pivot_when_every_pivot_has_its_perturbation_says_so_and_what_was_submitted(
    project, people
):
    """A project made from a published set: every pivot has a perturbation. "Submit & next"
    says the submit happened, then offers a pivot for another perturbation, and says why; with
    no room left it says so, and what to do, beside "submitted"."""
    expert = people["expert"]
    for n in range(2):
        pivot = ExampleFactory(project=project, external_id=f"p{n}", label="positive",
                               fields={"text": f"a good film {n}"})  # fmt: skip
        submitted_perturbation(project, expert, pivot=pivot, text=f"a bad film {n}")
    page = Client()
    page.force_login(expert)
    url = f"/p/{project.slug}/pivots/sample/"
    answer = page.post(url, {"split": "test", "strategy": "random", "submitted": "99"})
    said = [str(m) for m in answer.wsgi_request._messages]
    assert answer.status_code == 302 and "/edit/" in answer["Location"]
    assert said[0] == "Perturbation 99 submitted. Here is the next pivot."
    assert said[1].startswith("Every pivot of the test split has a perturbation already: this "
                              "one has 1; write another (up to 5 per pivot).")  # fmt: skip
    Claim.objects.all().delete()
    project.settings = {**project.settings, "max_perturbations_per_pivot": 1}
    project.save()
    answer = page.post(url, {"split": "test", "strategy": "random", "submitted": "100"})
    said = [str(m) for m in answer.wsgi_request._messages][-2:]  # the first answer's went unread
    assert answer["Location"].endswith("/pivots/?split=test")
    assert said[0] == "Perturbation 100 submitted."
    assert said[1].startswith("No pivot of the test split has room for a perturbation: each has 1")


def test_an_expert_adds_a_tag_of_their_own_from_the_editor(project, people):
    """A project made from a published set has only `gardner-2020`: an expert adds a tag of
    their own beside it, from the editor, and uses it; the audit log names it."""
    Tag.objects.filter(project=project).delete()
    Tag.objects.create(project=project, name="gardner-2020", description="published")
    pivot = ExampleFactory(project=project, label="positive", fields={"text": "a good film"})
    expert = people["expert"]
    pivot_claim(pivot=pivot, expert=expert)
    page = Client()
    page.force_login(expert)
    editor = f"/p/{project.slug}/pivots/{pivot.pk}/edit/"
    assert 'id="add-tag-card" open' in page.get(editor).content.decode()
    url = f"/p/{project.slug}/tags/add/"
    added = page.post(url, {"name": " word  choice ", "description": "a synonym", "next": editor})
    assert added.status_code == 302 and added["Location"] == editor
    assert list(project.tags.values_list("name", flat=True)) == ["gardner-2020", "word choice"]
    entry = AuditLog.objects.get(action="tags_changed")
    assert (entry.actor, entry.details) == (expert, {"added": ["word choice"]})
    again = page.post(url, {"name": "Word Choice", "next": "https://elsewhere.example/"})
    assert again["Location"] == f"/p/{project.slug}/pivots/"  # never off the site
    assert project.tags.count() == 2
    made = perturbation_save(author=expert, pivot=pivot, fields={"text": "a dull film"},
                             label="negative", tags=["word choice"], submit=True)  # fmt: skip
    assert [t.name for t in made.tags.all()] == ["word choice"]
    validator = Client()
    validator.force_login(people["validator"])
    assert validator.post(url, {"name": "x"}).status_code == 403
