import pytest
from playwright.sync_api import expect

from annotation.models import Perturbation, ValidationItem
from tests.browser.conftest import screenshot
from tests.factories import ExampleFactory, submitted_perturbation

pytestmark = pytest.mark.browser


def test_expert_writes_and_submits_a_perturbation_by_keyboard(page, login, project, people):
    ExampleFactory(
        project=project, external_id="rev-1", label="positive",
        fields={"text": "The acting was good and the music was lovely."},
    )  # fmt: skip
    login("erin")
    page.goto(f"/p/{project.slug}/pivots/")
    assert "rev-1" in page.inner_text("table.pivots")
    page.click("button:has-text('Claim & edit')")
    page.wait_for_url("**/edit/")

    area = page.locator("textarea[data-field=text]")
    area.fill("The acting was bad and the music was lovely.")
    page.locator("#diff-text ins").wait_for()
    assert page.inner_text("#diff-text ins") == "bad"
    assert page.inner_text("#diff-text del") == "good"
    assert "10% of tokens changed" in page.inner_text("#edit-ratio")

    page.locator("h1").click()  # leave the text box so that digits pick labels
    page.keyboard.press("2")
    assert page.locator("input[name=label][value=negative]").is_checked()
    page.locator("input[name=tags][value=intensity]").focus()
    page.keyboard.press("Space")
    page.locator("textarea[name=rationale]").fill("good -> bad flips the review.")
    screenshot(page, "editor")
    page.click("#submit-and-stop")
    page.wait_for_url("**/mine/**")
    row = page.locator("#my-work tbody tr").first
    assert "Submitted" in row.inner_text() and "intensity" in row.inner_text()
    screenshot(page, "my-work")
    perturbation = Perturbation.objects.get()
    assert (perturbation.status, perturbation.label) == ("submitted", "negative")
    assert perturbation.fields["text"] == "The acting was bad and the music was lovely."


def test_errors_show_inline_and_keep_the_experts_text(page, login, project, people):
    ExampleFactory(project=project, external_id="rev-2", label="positive",
                   fields={"text": "A good film."})  # fmt: skip
    login("erin")
    page.goto(f"/p/{project.slug}/pivots/")
    page.click("button:has-text('Claim & edit')")
    page.wait_for_url("**/edit/")
    expect(page.locator("#edit-ratio")).not_to_have_text("")
    page.locator("textarea[data-field=text]").fill("A bad film.")
    # Two labels: the flipped one is chosen already; no tag is.
    assert page.is_checked("input[name=label][value=negative]")
    page.keyboard.press("Control+Enter")
    page.locator("#editor-error").wait_for()
    assert "Choose at least one tag" in page.inner_text("#editor-error")
    assert page.locator("textarea[data-field=text]").input_value() == "A bad film."
    # The autosaved draft keeps the text on the server too.
    assert Perturbation.objects.get().fields["text"] == "A bad film."


def test_user_text_is_escaped_in_the_browser(page, login, project, people):
    pivot = ExampleFactory(project=project, fields={"text": "A good <b>film</b>."})
    perturbation = submitted_perturbation(project, people["expert"], pivot=pivot)
    script = {"text": "<script>alert(1)</script>"}
    Perturbation.objects.filter(pk=perturbation.pk).update(
        rationale="<script>alert(1)</script>", fields=script
    )
    ValidationItem.objects.filter(perturbation=perturbation).update(fields=script)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    login("erin")
    page.goto(f"/p/{project.slug}/mine/")
    assert "alert(1)" in page.inner_text("#my-work")
    assert page.locator("#my-work script").count() == 0
    page.goto(f"/p/{project.slug}/pivots/")
    assert "A good <b>film</b>." in page.inner_text("table.pivots")
    assert page.locator("table.pivots b:has-text('film')").count() == 0
    login("victor")
    page.goto(f"/p/{project.slug}/validate/")
    assert page.inner_text(".item-text") == "<script>alert(1)</script>"
    assert dialogs == []


def test_one_perturbation_costs_four_keystrokes_beyond_the_edit_then_the_next_pivot_opens(
    page, login, project, people
):
    """Esc (leave the text), a label digit, a tag key and Ctrl+Enter: then the next pivot."""
    from annotation.models import Claim

    for n in range(2):
        ExampleFactory(project=project, external_id=f"k{n}", label="positive",
                       fields={"text": f"The plot number {n} was good."})  # fmt: skip
    login("erin")
    page.goto(f"/p/{project.slug}/pivots/")
    page.click("button:has-text('Claim & edit')")
    page.wait_for_url("**/edit/")
    first = page.url
    assert page.evaluate("document.activeElement.dataset.field") == "text"  # focused on load
    for _ in range(len(" was good.")):
        page.keyboard.press("Backspace")
    page.keyboard.type(" was bad.")  # the text edit itself
    keys = ["Escape", "2", "a", "Control+Enter"]
    for key in keys:
        page.keyboard.press(key)
    page.wait_for_url(lambda url: url != first and url.endswith("/edit/"))
    assert len(keys) <= 4
    assert "submitted. Here is the next pivot." in page.inner_text(".messages")
    done = Perturbation.objects.get()
    first_tag = project.tags.first().name  # key "a" is the first tag in display order
    assert (done.status, done.label, [t.name for t in done.tags.all()]) == (
        "submitted", "negative", [first_tag],
    )  # fmt: skip
    assert done.fields["text"].endswith("was bad.")
    held = Claim.objects.get()  # the next pivot, claimed by the sampler; the first released
    assert held.example_id != done.pivot_id and held.expert == people["expert"]
    screenshot(page, "editor-next")
