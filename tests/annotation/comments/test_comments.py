"""Comments on a perturbation (docs/workflows.md, "Comments"): who reads and writes a thread,
Markdown sanitised as the guidelines are, mentions of members only, edits and deletions of
one's own (an admin deletes any), each in the audit log and the row's history."""

import pytest
from django.test import Client

from annotation.models import AuditLog, Comment
from tests.factories import member, submitted_perturbation, vote_all

pytestmark = pytest.mark.django_db


@pytest.fixture
def perturbation(project, people):  # type: ignore[no-untyped-def]
    return submitted_perturbation(project, people["expert"])


def url(perturbation, comment_id=None) -> str:  # type: ignore[no-untyped-def]
    base = f"/api/projects/{perturbation.project.slug}/perturbations/{perturbation.pk}/comments/"
    return f"{base}{comment_id}/" if comment_id else base


def test_an_admin_and_the_author_talk_in_one_thread(perturbation, people, client_for):  # type: ignore[no-untyped-def]
    admin, expert = client_for(people["admin"]), client_for(people["expert"])
    asked = admin.post(url(perturbation), {"body": "Why *bad*, @erin?"}, format="json")
    assert asked.status_code == 201
    answered = expert.post(url(perturbation), {"body": "It flips the label."}, format="json")
    assert answered.status_code == 201
    thread = expert.get(url(perturbation)).json()
    assert [(c["author"], c["body"]) for c in thread] == [
        ("alice", "Why *bad*, @erin?"),
        ("erin", "It flips the label."),
    ]
    assert thread[0]["html"] == ('<p>Why <em>bad</em>, <span class="mention">@erin</span>?</p>')


def test_markdown_is_sanitised_and_only_members_are_mentioned(perturbation, people, client_for):  # type: ignore[no-untyped-def]
    body = (
        "<script>alert(1)</script>[x](javascript:alert(2)) @olga @victor mail a@erin "
        "`@alice` <img src=x onerror=alert(3)>"
    )
    made = client_for(people["admin"]).post(url(perturbation), {"body": body}, format="json")
    html = made.json()["html"]
    assert "<script" not in html and "javascript:" not in html and "onerror" not in html
    assert '<span class="mention">@victor</span>' in html  # a member (a validator)
    assert '<span class="mention">@olga</span>' not in html and "@olga" in html  # not a member
    assert "a@erin" in html and "<code>@alice</code>" in html  # an address, and code, stay
    assert made.json()["body"] == body  # kept as written


def test_who_reads_a_thread(project, perturbation, people, client_for):  # type: ignore[no-untyped-def]
    client_for(people["admin"]).post(url(perturbation), {"body": "hello"}, format="json")
    other_expert = member(project, "ezra", "expert")
    assert client_for(other_expert).get(url(perturbation)).status_code == 404
    assert client_for(people["outsider"]).get(url(perturbation)).status_code == 404
    validator = client_for(people["validator"])
    assert validator.get(url(perturbation)).status_code == 404  # before their vote
    vote_all(perturbation.item, [people["validator"]], ["negative"])
    after = validator.get(url(perturbation))
    assert after.status_code == 200
    assert after.json()[0]["author"] is None and "alice" not in after.content.decode()
    refused = validator.post(url(perturbation), {"body": "me too"}, format="json")
    assert refused.status_code == 403
    assert Comment.objects.count() == 1


def test_edit_your_own_and_admins_delete_any(perturbation, people, staff, client_for):  # type: ignore[no-untyped-def]
    admin, expert = client_for(people["admin"]), client_for(people["expert"])
    mine = expert.post(url(perturbation), {"body": "first"}, format="json").json()["id"]
    edited = expert.patch(url(perturbation, mine), {"body": "second"}, format="json")
    assert edited.status_code == 200 and edited.json()["edited_at"] is not None
    assert admin.patch(url(perturbation, mine), {"body": "no"}, format="json").status_code == 403
    theirs = admin.post(url(perturbation), {"body": "admin's"}, format="json").json()["id"]
    assert expert.delete(url(perturbation, theirs)).status_code == 403
    assert admin.delete(url(perturbation, mine)).status_code == 204
    assert client_for(staff).delete(url(perturbation, theirs)).status_code == 204
    assert Comment.objects.count() == 0
    actions = list(AuditLog.objects.filter(action__startswith="comment_").values_list("action"))
    assert sorted(a for (a,) in actions) == [
        "comment_created", "comment_created", "comment_deleted", "comment_deleted",
        "comment_edited",
    ]  # fmt: skip


def test_an_empty_or_blank_comment_is_refused(perturbation, people, client_for):  # type: ignore[no-untyped-def]
    admin = client_for(people["admin"])
    for body in ("", "   \n "):
        answer = admin.post(url(perturbation), {"body": body}, format="json")
        assert answer.status_code == 400 and "body" in answer.content.decode(), body
    assert admin.post(url(perturbation), {"body": "x" * 10_001}, format="json").status_code == 400
    assert admin.post(url(perturbation), {}, format="json").status_code == 400
    assert Comment.objects.count() == 0


def test_the_data_row_the_editor_and_disputes_show_the_thread(project, perturbation, people):  # type: ignore[no-untyped-def]
    page = Client()
    page.force_login(people["admin"])
    row = f"/p/{project.slug}/data/perturbations/{perturbation.pk}/"
    posted = page.post(
        f"/p/{project.slug}/perturbations/{perturbation.pk}/comments/",
        {"body": "<b onclick=x>Look</b> at **this**", "back": row},
    )
    assert posted.status_code == 302 and posted["Location"] == f"{row}#comments"
    shown = page.get(row).content.decode()
    assert "<strong>this</strong>" in shown and "<b onclick" not in shown
    assert "comment created" in shown  # the row's history
    audit = page.get(f"/p/{project.slug}/audit/").content.decode()
    assert "comment_created" in audit or "comment created" in audit
    perturbation.status = "disputed"
    perturbation.save()
    disputes = page.get(f"/p/{project.slug}/disputes/").content.decode()
    assert f'perturbations/{perturbation.pk}/#comments" class="comments-link">Comments (1)' in (
        disputes
    )


def test_a_page_form_never_leaves_for_another_site(project, perturbation, people):  # type: ignore[no-untyped-def]
    page = Client()
    page.force_login(people["expert"])
    posted = page.post(
        f"/p/{project.slug}/perturbations/{perturbation.pk}/comments/",
        {"body": "hi", "back": "https://evil.example/"},
    )
    assert posted["Location"] == (
        f"/p/{project.slug}/data/perturbations/{perturbation.pk}/#comments"
    )


def test_the_editor_shows_the_authors_draft_thread(project, people):  # type: ignore[no-untyped-def]
    from annotation.authoring.services.drafts import perturbation_save
    from annotation.comments.services import comment_posted
    from tests.factories import ExampleFactory

    pivot = ExampleFactory(project=project, label="positive")
    draft = perturbation_save(
        author=people["expert"], pivot=pivot, fields={"text": "bad"}, label="negative",
        tags=["negation"], submit=False,
    )  # fmt: skip
    comment_posted(perturbation=draft, author=people["admin"], body="Sent back: *too long*")
    page = Client()
    page.force_login(people["expert"])
    shown = page.get(f"/p/{project.slug}/perturbations/{draft.pk}/edit/").content.decode()
    assert "<em>too long</em>" in shown and 'id="comment-form"' in shown
