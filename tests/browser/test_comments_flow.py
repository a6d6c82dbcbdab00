"""Comments in Chromium, by keyboard (docs/workflows.md, "Comments"): an admin opens a dispute's
thread from Disputes and asks the author, mentioning them; the author answers on the row and
edits the answer; the admin deletes it after confirming. Markdown shows sanitised, mentions
marked."""

import pytest
from playwright.sync_api import expect

from annotation.models import AuditLog, Comment, Perturbation
from tests.browser.conftest import screenshot
from tests.factories import submitted_perturbation

pytestmark = pytest.mark.browser


def test_a_dispute_is_discussed_in_its_thread(page, login, project, people):  # type: ignore[no-untyped-def]
    perturbation = submitted_perturbation(project, people["expert"])
    Perturbation.objects.filter(pk=perturbation.pk).update(status="disputed")
    login("alice")
    page.goto(f"/p/{project.slug}/disputes/")
    page.get_by_role("link", name="Comments (0)").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Comments")).to_be_visible()
    box = page.get_by_label("Add a comment")
    box.focus()
    page.keyboard.type("Why **bad**, @erin? <script>alert(1)</script> @nobody")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Post comment")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_contain_text("Comment posted.")
    thread = page.locator("#comments")
    expect(thread.locator(".comment")).to_have_count(1)
    expect(thread.locator(".mention")).to_have_text("@erin")
    expect(thread.locator(".comment-body strong")).to_have_text("bad")
    expect(thread).to_contain_text("@nobody")
    assert thread.locator(".comment-body script").count() == 0
    screenshot(page, "comments-admin-asks")

    page.context.clear_cookies()
    login("erin")
    page.goto(f"/p/{project.slug}/data/perturbations/{perturbation.pk}/")
    page.get_by_label("Add a comment").fill("It flips the label.")
    page.get_by_role("button", name="Post comment").press("Enter")
    expect(thread.locator(".comment")).to_have_count(2)
    mine = thread.locator(".comment").nth(1)
    mine.locator("summary", has_text="Edit").focus()
    page.keyboard.press("Enter")
    editor = mine.get_by_label("Your comment (Markdown)")
    editor.fill("It flips the label: *bad* is negative.")
    mine.get_by_role("button", name="Save").press("Enter")
    expect(page.get_by_role("status")).to_contain_text("Comment edited.")
    expect(thread.locator(".comment").nth(1)).to_contain_text("edited")
    expect(thread.locator(".comment").nth(1).locator("em")).to_have_text("bad")
    screenshot(page, "comments-author-answers")

    page.context.clear_cookies()
    login("alice")
    page.goto(f"/p/{project.slug}/data/perturbations/{perturbation.pk}/")
    page.once("dialog", lambda dialog: dialog.accept())
    answer = Comment.objects.get(author=people["expert"])
    page.get_by_role("button", name=f"Delete comment {answer.pk}").press("Enter")
    expect(page.get_by_role("status")).to_contain_text("Comment deleted.")
    expect(thread.locator(".comment")).to_have_count(1)
    assert list(Comment.objects.values_list("author__username", flat=True)) == ["alice"]
    assert AuditLog.objects.filter(action="comment_deleted", actor=people["admin"]).exists()
    screenshot(page, "comments-after-delete")


def test_a_release_includes_comments_only_when_the_box_is_ticked(  # type: ignore[no-untyped-def]
    page, login, project, people, settings, tmp_path
):
    import zipfile

    from annotation.comments.services import comment_posted
    from annotation.models import Release

    settings.MEDIA_ROOT = tmp_path
    perturbation = submitted_perturbation(project, people["expert"])
    Perturbation.objects.filter(pk=perturbation.pk).update(status="accepted")
    comment_posted(perturbation=perturbation, author=people["admin"], body="Clear flip.")
    login("alice")
    page.goto(f"/p/{project.slug}/releases/")
    box = page.get_by_label("Include comments")
    expect(box).not_to_be_checked()  # off by default
    page.get_by_label("Version").fill("1.0")
    box.focus()
    page.keyboard.press("Space")
    expect(box).to_be_checked()
    screenshot(page, "comments-release-option")
    page.get_by_role("button", name="Publish").press("Enter")
    page.wait_for_url("**/releases/*/")
    release = Release.objects.get(version="1.0")
    with zipfile.ZipFile(tmp_path / release.bundle) as bundle:
        assert b"Clear flip." in bundle.read("comments.jsonl")
