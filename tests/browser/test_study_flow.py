"""A crowd study in the browser: an admin makes a study link on the Studies page; a Prolific
participant opens it, passes the qualification test and labels their items by keyboard, and
reaches the completion code; the admin sees them on the Studies and Validators pages."""

import re

import pytest
from playwright.sync_api import expect

from annotation.crowd import pool
from annotation.models import GoldItem, Participant, ValidationItem, Vote
from tests.browser.conftest import screenshot
from tests.factories import ExampleFactory, submitted_perturbation

pytestmark = pytest.mark.browser


def test_a_participant_goes_from_the_study_link_to_the_completion_code(
    page, login, project, people, browser, live_server
):  # fmt: skip
    project.settings = {**project.settings, "control_rate": 0, "qualification_items": 2,
                        "qualification_min_accuracy": 1.0, "gold_rate": 0.2}  # fmt: skip
    project.save()
    for n in range(4):
        ExampleFactory(project=project, label=["positive", "negative"][n % 2],
                       fields={"text": f"Known review {n}."})  # fmt: skip
    for _ in range(6):
        submitted_perturbation(project, people["expert"])
    pool.pool_refresh(project)
    login("alice")
    page.goto(f"/p/{project.slug}/studies/")
    page.fill("input[name=name]", "Pilot")
    page.fill("input[name=items_per_participant]", "5")
    page.fill("input[name=completion_code]", "PILOT5")
    page.click("text=Create the study link")
    link = page.input_value("input.link-copy")
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in link
    screenshot(page, "studies")
    # What Prolific sends: its placeholders filled in.
    ids = "PROLIFIC_PID=60f1a2b3c4d5e6f7a8b9c0d1&STUDY_ID=abc&SESSION_ID=xyz"
    arrival = f"{link.split('?')[0]}?{ids}"
    participant = browser.new_context(base_url=live_server.url).new_page()
    participant.set_default_timeout(15_000)
    participant.goto(arrival)
    expect(participant.locator("#study-items")).to_contain_text("You will label 5 items")
    participant.click("#start")
    expect(participant.locator("#vote-form")).to_be_visible()
    participant.wait_for_load_state("load")  # the page's script hears the keys (CI once lost one)
    assert participant.locator("nav.tabs").count() == 0  # no page but this one
    keys = {"positive": "1", "negative": "2"}
    for done in range(5):
        expect(participant.locator("#done-count")).to_have_text(str(done))
        item_id = int(participant.get_attribute("#vote-form", "data-item") or 0)
        gold = GoldItem.objects.filter(pk=item_id).first()
        label = gold.gold_label if gold else ValidationItem.objects.get(pk=item_id).gold_label
        if done == 2:
            expect(participant.locator("#counter")).to_contain_text("of 5 in this project")
            screenshot(participant, "study-participant")
        if done == 4:
            with participant.expect_navigation():
                participant.keyboard.press(keys[label])
        else:
            participant.keyboard.press(keys[label])
    expect(participant.locator("#completion-code")).to_have_text("PILOT5")
    assert "cc=PILOT5" in (participant.get_attribute("#return-link", "href") or "")
    screenshot(participant, "study-done")
    # Nothing else opens for the participant.
    assert participant.goto("/").status == 404
    (someone,) = Participant.objects.all()
    assert someone.completed_at is not None
    assert Vote.objects.filter(validator=someone.user, counts=True).exists()
    page.goto(f"/p/{project.slug}/studies/")
    row = page.inner_text("#studies tbody tr")
    assert re.search(r"\b1\s+1\b", row), row  # one participant, one completed
    page.goto(f"/p/{project.slug}/validators/")
    expect(page.locator("#validators")).to_contain_text("passed")
    screenshot(page, "validators-crowd")
