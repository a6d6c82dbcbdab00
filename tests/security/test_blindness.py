"""Validators stay blind: no response shows them a pivot, an author, a rationale or other votes,
and nothing they can see moves when their vote resolves an item (side channels included)."""

import re

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.factories import ExampleFactory, member, submitted_perturbation, vote_all

pytestmark = pytest.mark.django_db

PIVOT = "QZX pivot original, never shown"
RATIONALE = "RATIONALE-QZX"
AUTHOR = "author_qzx-1"  # "_" and "-" never occur in CSRF tokens


def validator_views(project, validator) -> dict[str, str]:  # type: ignore[no-untyped-def]
    page, api = Client(), APIClient()
    page.force_login(validator)
    api.force_authenticate(validator)
    slug = project.slug
    # The header's unread count is on every page; the inbox's API lists them (the inbox page
    # names every kind in its choices, whoever reads it).
    texts = {path: page.get(path).content.decode() for path in ("/", f"/p/{slug}/")}
    for path in ("/api/projects/", f"/api/projects/{slug}/", "/api/notifications/"):
        texts[path] = api.get(path).content.decode()
    return texts


def masked(text: str) -> str:
    """Without CSRF tokens and the validator's own two figures (votes cast, items left)."""
    text = re.sub(r'(csrfmiddlewaretoken" value="|"X-CSRFToken": ")[^"]+', r"\1", text)
    return re.sub(r"<b>\d+</b> (votes cast|items left for you)", r"<b>N</b> \1", text)


@pytest.fixture
def setup(project, people):  # type: ignore[no-untyped-def]
    project.settings = {**project.settings, "control_rate": 0.5}
    project.save()
    author = member(project, AUTHOR, "expert")
    pivot = ExampleFactory(project=project, label="positive", fields={"text": f"{PIVOT} good"})
    perturbation = submitted_perturbation(project, author, pivot=pivot, label="negative")
    perturbation.rationale = RATIONALE
    perturbation.save()
    crowd = [member(project, f"crowd_v-{i}", "validator") for i in range(4)]
    vote_all(perturbation.item, crowd, ["negative"] * 4)
    return perturbation, people["validator"], crowd


def test_no_validator_facing_response_shows_what_is_not_theirs(project, setup):
    perturbation, validator, crowd = setup
    api = APIClient()
    api.force_authenticate(validator)
    served = api.get(f"/api/projects/{project.slug}/validation/next/")
    assert served.json()["item"] == perturbation.item.pk  # the perturbation, not the control
    page = Client()
    page.force_login(validator)
    texts = {
        **validator_views(project, validator),
        "next": served.content.decode(),
        "validate page": page.get(f"/p/{project.slug}/validate/").content.decode(),
    }
    for where, text in texts.items():
        for secret in (f"{PIVOT} good", RATIONALE, AUTHOR, *[v.username for v in crowd]):
            assert secret not in text, (where, secret)
        assert not re.search(r'"votes"\s*:|majority_label|"outcome"|accepted|disputed', text), where


def test_nothing_a_validator_sees_moves_when_their_vote_resolves_an_item(project, setup):
    perturbation, validator, _ = setup
    before = {k: masked(v) for k, v in validator_views(project, validator).items()}
    voter = APIClient()
    voter.force_authenticate(validator)
    vote = voter.post(
        f"/api/projects/{project.slug}/validation/{perturbation.item.pk}/vote/",
        {"label": "negative"},
        format="json",
    )
    assert vote.status_code == 201 and set(vote.json()) == {"vote", "done", "next"}
    assert vote.json()["done"] == 1  # their own count: one vote, whatever it resolved
    assert set(vote.json()["vote"]) == {"item", "label", "answer", "flags"}
    assert vote.json()["next"] is None  # the one item is done: nothing else to say
    perturbation.refresh_from_db()
    assert perturbation.status == "accepted"  # the vote resolved it
    after = {k: masked(v) for k, v in validator_views(project, validator).items()}
    assert after == before


def test_an_original_is_never_served_within_ten_items_of_its_perturbation(project, people):
    project.settings = {**project.settings, "control_rate": 1.0, "votes_per_item": 1,
                        "majority": 1}  # fmt: skip
    project.save()
    for n in range(12):
        pivot = ExampleFactory(project=project, label="positive", fields={"text": f"good {n}"})
        submitted_perturbation(project, people["expert"], pivot=pivot, text=f"bad {n}")
    validator = member(project, "solo", "validator")
    api = APIClient()
    api.force_authenticate(validator)
    served = []
    while (
        response := api.get(f"/api/projects/{project.slug}/validation/next/")
    ).status_code == 200:
        item = response.json()["item"]
        served.append(item)
        api.post(f"/api/projects/{project.slug}/validation/{item}/vote/", {"label": "positive"})
    from annotation.models import ValidationItem

    pivots = []
    for item in ValidationItem.objects.in_bulk(served).values():
        pivots.append((item.pk, item.control_id or item.perturbation.pivot_id))
    order = {pk: i for i, pk in enumerate(served)}
    pivot_of = dict(pivots)
    positions: dict[int, list[int]] = {}
    for pk in served:
        positions.setdefault(pivot_of[pk], []).append(order[pk])
    for seen in positions.values():
        assert len(seen) == 1 or abs(seen[0] - seen[1]) > 10, seen
    # Near the end, what is left may all be too close to this validator's last votes: it stays
    # open for someone else, never served to them early.
    left = ValidationItem.objects.filter(project=project, status="open")
    assert len(served) + left.count() == 24 and len(served) >= 22
    other = APIClient()
    other.force_authenticate(member(project, "second", "validator"))
    for _ in range(left.count()):
        assert other.get(f"/api/projects/{project.slug}/validation/next/").json()["item"] in set(
            left.values_list("pk", flat=True)
        )


def test_a_controls_id_does_not_point_to_its_perturbation(project, people):
    """A control's id was its perturbation's id + 1 (24 of 24): a validator who saw both
    knew which original an edit came from."""
    from annotation.models import ValidationItem

    project.settings = {**project.settings, "control_rate": 1.0}
    project.save()
    pairs = []
    for n in range(24):
        pivot = ExampleFactory(project=project, external_id=f"ctl-{n}")
        p = submitted_perturbation(project, people["expert"], pivot=pivot)
        pairs.append((p.item.pk, ValidationItem.objects.get(control=pivot).pk))
    assert all(abs(item - control) > 1_000 for item, control in pairs)
    ids = [pk for pair in pairs for pk in pair]
    assert ids != sorted(ids)  # not in the order they were created


def test_a_vote_around_the_queue_is_held_to_the_queues_rules(project, people):
    """A validator could vote on items never served to them, with no lease, skipping the
    spacing of related items (an original right after its perturbation)."""
    from annotation.models import Vote

    no_controls = project
    no_controls.settings = {**project.settings, "control_rate": 0}
    no_controls.save()
    validator = people["validator"]
    pivot = ExampleFactory(project=no_controls, external_id="spaced", label="positive")
    first = submitted_perturbation(no_controls, people["expert"], pivot=pivot)
    sibling_text = pivot.fields["text"].replace("good", "awful")
    sibling = submitted_perturbation(no_controls, people["expert"], pivot=pivot, text=sibling_text)
    unrelated = submitted_perturbation(no_controls, people["expert"])
    api = APIClient()
    api.force_authenticate(validator)
    url = f"/api/projects/{no_controls.slug}/validation/{{}}/vote/"
    assert api.post(url.format(first.item.pk), {"label": "negative"}).status_code == 201
    refused = api.post(url.format(sibling.item.pk), {"label": "negative"})
    assert refused.status_code == 409 and "not served to you" in refused.json()["detail"]
    assert api.post(url.format(unrelated.item.pk), {"label": "negative"}).status_code == 201
    assert Vote.objects.filter(validator=validator).count() == 2


COMMENT = "Why negative, @victor? QZX-comment"


def test_comments_stay_hidden_from_a_validator_until_their_vote_and_move_nothing(project, setup):  # type: ignore[no-untyped-def]
    """Comments (docs/workflows.md): before their vote a validator finds no thread (404, as for
    a perturbation that does not exist), the item served reads the same, and nothing they can
    read moves when a comment is posted, edited or deleted; after their vote the thread names
    nobody."""
    perturbation, validator, _ = setup
    slug = project.slug
    admin = APIClient()
    admin.force_authenticate(member(project, "admin_qzx-1", "admin"))
    mine = APIClient()
    mine.force_authenticate(validator)
    thread = f"/api/projects/{slug}/perturbations/{perturbation.pk}/comments/"
    before = {k: masked(v) for k, v in validator_views(project, validator).items()}
    served = mine.get(f"/api/projects/{slug}/validation/next/").content
    made = admin.post(thread, {"body": COMMENT}, format="json").json()["id"]
    admin.patch(f"{thread}{made}/", {"body": COMMENT + " (edited)"}, format="json")
    admin.post(thread, {"body": "second"}, format="json")
    gone = admin.post(thread, {"body": "third"}, format="json").json()["id"]
    admin.delete(f"{thread}{gone}/")
    nowhere = f"/api/projects/{slug}/perturbations/{perturbation.pk + 10_000}/comments/"
    hidden = mine.get(thread)
    assert hidden.status_code == 404 and hidden.content == mine.get(nowhere).content
    page = Client()
    page.force_login(validator)
    own_page = f"/p/{slug}/perturbations/{perturbation.pk}/thread/"
    no_page = f"/p/{slug}/perturbations/{perturbation.pk + 10_000}/thread/"
    hidden_page = page.get(own_page)
    assert hidden_page.status_code == 404
    assert hidden_page.content == page.get(no_page).content
    assert mine.get(f"/api/projects/{slug}/validation/next/").content == served
    assert {k: masked(v) for k, v in validator_views(project, validator).items()} == before
    validate = page.get(f"/p/{slug}/validate/").content.decode()
    assert "QZX-comment" not in validate and "admin_qzx-1" not in validate
    item = perturbation.item.pk
    mine.post(f"/api/projects/{slug}/validation/{item}/vote/", {"label": "negative"})
    after = mine.get(thread)
    assert after.status_code == 200 and [c["author"] for c in after.json()] == [None, None]
    assert "admin_qzx-1" not in after.content.decode() and AUTHOR not in after.content.decode()
    shown = page.get(own_page).content.decode()
    assert "QZX-comment" in shown and "admin_qzx-1" not in shown and AUTHOR not in shown
