"""Free-text (QA) pages in Chromium: the expert writes a new question and its answer, the
validator types answers with the keyboard alone, and the admin sees the answer statistics."""

import pytest

from annotation.models import Perturbation, Vote
from annotation.projects.services import project_create
from tests.browser.conftest import screenshot
from tests.factories import ExampleFactory, member

pytestmark = pytest.mark.browser

CONTEXT = "Marie Curie won the Nobel Prize in 1903 and again in 1911."


@pytest.fixture
def qa_project(people):  # type: ignore[no-untyped-def]
    project = project_create(
        user=people["admin"], name="Curie QA", slug="curie", task_type="free_text",
        fields=[{"name": "context", "editable": False}, {"name": "question"}],
        labels=[], extra_labels=["unanswerable"], tags=[{"name": "order"}],
        settings={"control_rate": 0, "max_edit_ratio": 1.0},
    )  # fmt: skip
    member_role(project, people["expert"], "expert")
    member_role(project, people["validator"], "validator")
    for n in range(3):
        fields = {"context": CONTEXT, "question": f"When did she first win? ({n})"}
        ExampleFactory(
            project=project, external_id=f"q{n}", label="", answers=["1903"], fields=fields
        )
    return project


def member_role(project, user, role):  # type: ignore[no-untyped-def]
    from annotation.models import Membership

    Membership.objects.create(project=project, user=user, role=role)


def test_qa_sets_are_written_and_validated_by_keyboard(page, login, qa_project, people):
    login("erin")
    page.goto("/p/curie/pivots/")
    assert "1903" in page.inner_text("table.pivots")  # the pivots' answers, in place of labels
    page.click("button:has-text('Claim & edit')")
    page.wait_for_url("**/edit/")
    assert "gold answers: 1903" in page.inner_text("h1")
    page.locator("textarea[data-field=question]").fill("When did she win again?")
    page.locator("#answers").fill("1903")
    page.locator("h1").click()
    page.keyboard.press("a")  # the first tag
    page.keyboard.press("Control+Enter")
    page.locator("#editor-error").wait_for()
    assert "differ from the original's" in page.inner_text("#editor-error")
    page.locator("#answers").fill("1911")
    screenshot(page, "editor-qa")
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    submitted = Perturbation.objects.get(status="submitted")
    assert (
        submitted.answers == ["1911"] and submitted.fields["question"] == "When did she win again?"
    )

    page.context.clear_cookies()
    crowd = [people["validator"], *(member(qa_project, f"c{i}", "validator") for i in range(4))]
    login("victor")
    page.goto("/p/curie/validate/")
    assert "1911" not in page.inner_text("legend")  # the author's answer is nowhere but the text
    assert page.evaluate("document.activeElement.id") == "answer"
    page.keyboard.press("Enter")  # nothing typed: refused inline, nothing lost
    page.locator("#vote-error").wait_for()
    assert "Type an answer" in page.inner_text("#vote-error")
    page.keyboard.type("in 1911")
    screenshot(page, "validate-qa")
    with page.expect_navigation():  # the only item: the page reloads to say nothing is left
        page.keyboard.press("Enter")
    assert "Nothing left for you" in page.inner_text("#queue-empty")
    vote = Vote.objects.get(validator=people["validator"])
    assert (vote.answer, vote.label) == ("in 1911", "")
    assert vote.seconds_spent >= 0

    from annotation.validation.services.votes import vote_cast

    item = vote.item
    for validator, answer in zip(crowd[1:], ["1911", "1911.", "The 1911", "1903"], strict=True):
        vote_cast(project=item.project, item_id=item.pk, validator=validator, answer=answer)
    assert Perturbation.objects.get(pk=submitted.pk).status == "accepted"

    page.context.clear_cookies()
    login("alice")
    page.goto("/p/curie/")
    page.locator("#majority-share").wait_for()
    assert "100.0%" in page.inner_text("#majority-share")
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.reload()
    page.locator("canvas").nth(2).wait_for()
    assert not errors
    screenshot(page, "dashboard-qa")
