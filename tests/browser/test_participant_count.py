"""A crowd participant's count is their study's (issue 59's walk): a study of 2 items in a
project of 5 open items said "You have labelled 0 items of 2 in this project; 5 left for you"
before, the project's queue beside the study's number. What is left for a participant is what
is left of their study (or of the queue, where it holds fewer), before and after a vote."""

import pytest
from playwright.sync_api import expect

from annotation.crowd.services import studies
from tests.factories import submitted_perturbation

pytestmark = pytest.mark.browser
PID = "60f1a2b3c4d5e6f7a8b9c0d1"


def test_a_participant_is_told_their_studys_count_not_the_projects(
    project, people, browser, live_server
):
    for _ in range(5):
        submitted_perturbation(project, people["expert"])
    study = studies.study_create(project=project, actor=people["admin"], name="Pilot",
                                 platform="prolific", items_per_participant=2)  # fmt: skip
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"/p/{project.slug}/study/{study.token}/?PROLIFIC_PID={PID}&STUDY_ID=s&SESSION_ID=x")
    page.click("#start")
    expect(page.locator("#vote-form")).to_be_visible()
    counter = page.locator("#counter")
    expect(counter).to_have_text("You have labelled 0 items of 2 in this project; 2 left for you.")
    page.wait_for_load_state("networkidle")  # the page's keys are bound
    page.keyboard.press("1")
    expect(page.locator("#done-count")).to_have_text("1")
    expect(counter).to_have_text("You have labelled 1 item of 2 in this project; 1 left for you.")
    page.reload()
    expect(counter).to_have_text("You have labelled 1 item of 2 in this project; 1 left for you.")
    context.close()
