"""A notification about a perturbation links to a page where its recipient reads it: the
author their My work (its outcome), their editor (a draft's comments) or their Data row;
an admin the Data row; a validator who voted, or an expert a comment mentions, the thread's
own page. Each link is followed here as its recipient: a page (200) that shows the item or
the comment, never a 403 or a 404."""

import pytest
from django.test import Client

from annotation.authoring.services.drafts import perturbation_save
from annotation.comments.services import comment_posted
from annotation.models import Notification
from annotation.validation.services.adjudication import perturbation_adjudicate
from annotation.validation.services.quality import items_send_back
from tests.factories import ExampleFactory, member, submitted_perturbation, vote_all

pytestmark = pytest.mark.django_db


@pytest.fixture
def committed(django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    def run(work):  # type: ignore[no-untyped-def]
        with django_capture_on_commit_callbacks(execute=True):
            return work()

    return run


@pytest.fixture
def validators(project):  # type: ignore[no-untyped-def]
    return [member(project, f"val{n}", "validator") for n in range(5)]


def followed(user, kind: str) -> str:  # type: ignore[no-untyped-def]
    """The page of `user`'s newest notification of `kind`, as they open it."""
    url = Notification.objects.filter(user=user, kind=kind).latest("pk").url
    assert url.startswith("/p/")
    browser = Client()
    browser.force_login(user)
    page = browser.get(url)
    assert page.status_code == 200, (url, page.status_code)
    return page.content.decode()


def test_the_author_opens_each_outcome_on_my_work(project, people, validators, committed):
    expert = people["expert"]
    disputed = submitted_perturbation(project, expert, label="negative")
    committed(lambda: vote_all(disputed.item, validators, ["positive"] * 5))
    assert f'data-id="{disputed.pk}"' in followed(expert, "perturbation.disputed")
    committed(
        lambda: perturbation_adjudicate(
            perturbation=disputed, admin=people["admin"], decision="reject"
        )
    )
    assert f'data-id="{disputed.pk}"' in followed(expert, "perturbation.decided")
    sent = submitted_perturbation(project, expert, label="negative")
    committed(lambda: vote_all(sent.item, validators, ["negative"] * 5))
    committed(lambda: items_send_back(item_ids=[sent.item.pk], clear_votes=True, extra_votes=0))
    assert f'data-id="{sent.pk}"' in followed(expert, "perturbation.sent_back")


def test_the_author_reads_a_comment_on_their_data_row_or_their_drafts_editor(
    project, people, committed
):
    expert, admin = people["expert"], people["admin"]
    submitted = submitted_perturbation(project, expert)
    committed(lambda: comment_posted(perturbation=submitted, author=admin, body="Why *this*?"))
    assert "Why <em>this</em>?" in followed(expert, "perturbation.commented")
    pivot = ExampleFactory(project=project, label="positive")
    draft = perturbation_save(
        author=expert, pivot=pivot, fields={"text": "Not it."}, label="negative",
        tags=["negation"], submit=False,
    )  # fmt: skip
    committed(lambda: comment_posted(perturbation=draft, author=admin, body="Shorter, please."))
    page = followed(expert, "perturbation.commented")
    assert "Shorter, please." in page and 'id="comment-form"' in page  # the editor answers


def test_each_mentioned_reader_opens_a_page_with_the_comment(
    project, people, validators, committed
):
    perturbation = submitted_perturbation(project, people["expert"], label="negative")
    voted, unvoted = validators[0], validators[1]
    expert_validator = member(project, "evan", "expert", "validator")  # voted: reads it
    other_expert = member(project, "ezra", "expert")
    other_admin = member(project, "adam", "admin")
    committed(lambda: vote_all(perturbation.item, [voted, expert_validator], ["negative"] * 2))
    body = "Look, @adam @val0 @val1 @evan @ezra: a *point*."
    committed(lambda: comment_posted(perturbation=perturbation, author=people["admin"], body=body))
    for reader in (other_admin, voted, expert_validator, other_expert):
        page = followed(reader, "mention")
        assert "a <em>point</em>." in page, reader.username
    for reader in (voted, expert_validator, other_expert):  # no names, no label
        page = followed(reader, "mention")
        assert "alice" not in page and "erin" not in page and "negative" not in page
    assert not Notification.objects.filter(user=unvoted).exists()  # blind: may still vote
    browser = Client()
    browser.force_login(unvoted)
    thread = f"/p/{project.slug}/perturbations/{perturbation.pk}/thread/"
    assert browser.get(thread).status_code == 404


def test_an_expert_not_mentioned_finds_no_thread(project, people, committed):
    perturbation = submitted_perturbation(project, people["expert"])
    committed(lambda: comment_posted(perturbation=perturbation, author=people["admin"], body="Hm."))
    browser = Client()
    browser.force_login(member(project, "ezra", "expert"))
    assert (
        browser.get(f"/p/{project.slug}/perturbations/{perturbation.pk}/thread/").status_code == 404
    )
