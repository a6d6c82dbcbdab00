"""A participant in the browser (issue 49, second walk): the study link opens a start page (the
task, the guidelines, how many items, that some check the work) before any item; the header's
brand leads back to it and Leave says how to come back; a second participant id in the same
browser is asked about, not switched to silently; an MTurk worker gets the same start page."""

import pytest
from playwright.sync_api import expect

from annotation.crowd.services import studies
from annotation.models import Guidelines, Participant
from tests.browser.conftest import screenshot
from tests.factories import ExampleFactory, submitted_perturbation

pytestmark = pytest.mark.browser
PID, OTHER = "60f1a2b3c4d5e6f7a8b9c0d1", "70f1a2b3c4d5e6f7a8b9c0d2"


@pytest.fixture
def crowd(project, people):  # type: ignore[no-untyped-def]
    project.settings = {**project.settings, "control_rate": 0, "qualification_items": 1,
                        "qualification_min_accuracy": 0.0, "gold_rate": 0.2}  # fmt: skip
    project.save()
    Guidelines.objects.create(project=project, version=1,
                              text="Judge the **whole review**, not one phrase.")  # fmt: skip
    for n in range(4):
        ExampleFactory(project=project, label=["positive", "negative"][n % 2],
                       fields={"text": f"Known review {n}."})  # fmt: skip
    for _ in range(4):
        submitted_perturbation(project, people["expert"])
    return project


def participant_page(browser, live_server):  # type: ignore[no-untyped-def]
    page = browser.new_context(base_url=live_server.url).new_page()
    page.set_default_timeout(15_000)
    return page


def test_a_prolific_participant_starts_leaves_and_comes_back(crowd, people, browser, live_server):
    study = studies.study_create(project=crowd, actor=people["admin"], name="Pilot",
                                 platform="prolific", items_per_participant=5)  # fmt: skip
    home = f"/p/{crowd.slug}/study/{study.token}/"
    arrival = f"{home}?PROLIFIC_PID={PID}&STUDY_ID=s1&SESSION_ID=x1"
    page = participant_page(browser, live_server)
    page.goto(arrival)
    # The start page, not an item: the task, the guidelines, the count, the checks.
    expect(page.locator("#vote-form")).to_have_count(0)
    expect(page.locator("#study-intro")).to_contain_text("choose the label that fits each one")
    expect(page.locator("#study-items")).to_contain_text("You will label 5 items")
    expect(page.locator("#study-checks")).to_contain_text("you are not told which")
    expect(page.locator("#study-guidelines strong")).to_have_text("whole review")
    header = page.locator("header.topbar")
    expect(header).to_contain_text(f"Participant {PID}")
    expect(header).not_to_contain_text("Log out")
    screenshot(page, "study-start")
    page.click("#start")
    expect(page.locator("#vote-form")).to_be_visible()
    page.wait_for_load_state("networkidle")  # the page's keys are bound
    page.keyboard.press("1")
    expect(page.locator("#done-count")).to_have_text("1")
    # The brand leads to the study's page (it answered 404 before), which now says how far.
    page.click("header a.brand")
    expect(page.locator("#study-items")).to_contain_text("you have labelled 1 so far")
    expect(page.locator("#start")).to_have_text("Go on")
    # Leave: signed out, told how to come back.
    page.click("header >> text=Leave")
    expect(page.locator("#study-left")).to_contain_text(
        "open the study again from Prolific, with the same link"
    )
    expect(page.locator("header.topbar a")).to_have_count(0)  # nothing to lead to a login form
    screenshot(page, "study-left")
    page.goto(arrival)
    expect(page.locator("#study-items")).to_contain_text("you have labelled 1 so far")
    assert Participant.objects.count() == 1


def test_a_second_participant_id_in_the_same_browser_is_asked_about(crowd, people, browser,
                                                                     live_server):  # fmt: skip
    study = studies.study_create(project=crowd, actor=people["admin"], name="Pilot",
                                 platform="prolific", items_per_participant=5)  # fmt: skip
    home = f"/p/{crowd.slug}/study/{study.token}/"
    page = participant_page(browser, live_server)
    page.goto(f"{home}?PROLIFIC_PID={PID}&STUDY_ID=s1&SESSION_ID=x1")
    page.goto(f"{home}?PROLIFIC_PID={OTHER}&STUDY_ID=s1&SESSION_ID=x2")
    expect(page.locator("#other-participant")).to_contain_text(f"participant {PID}")
    expect(page.locator("#other-participant")).to_contain_text(f"participant {OTHER}")
    assert Participant.objects.count() == 1  # not switched
    screenshot(page, "study-second-participant")
    page.click(f"text=Go on as {PID}")
    expect(page.locator("header.topbar")).to_contain_text(f"Participant {PID}")
    page.go_back()
    page.click(f"text=Switch to {OTHER}")
    expect(page.locator("header.topbar")).to_contain_text(f"Participant {OTHER}")
    expect(page.locator("#start")).to_have_text("Start")
    assert Participant.objects.count() == 2


def test_an_mturk_worker_gets_the_start_page_after_the_preview(crowd, people, browser,
                                                               live_server):  # fmt: skip
    study = studies.study_create(project=crowd, actor=people["admin"], name="HIT",
                                 platform="mturk", items_per_participant=4)  # fmt: skip
    home = f"/p/{crowd.slug}/study/{study.token}/"
    page = participant_page(browser, live_server)
    page.goto(f"{home}?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1")
    expect(page.locator("#study-guidelines strong")).to_have_text("whole review")
    expect(page.locator("#study-preview")).to_contain_text("Accept the task to begin")
    expect(page.locator("#start")).to_have_count(0)
    page.goto(f"{home}?workerId=A1B2C3D4E5F6G7&assignmentId=3AB&hitId=H1")
    expect(page.locator("#study-items")).to_contain_text("You will label 4 items")
    expect(page.locator("#study-intro")).not_to_contain_text("Prolific")
    screenshot(page, "study-start-mturk")
    page.click("#start")
    expect(page.locator("#vote-form")).to_be_visible()
