"""A participant cannot be misled by Back, Forward or a second tab (issue 59): the count and the
item shown are the server's, a vote the server had already taken is said and counted once; and
a participant reads nothing meant for the project's developers or admins."""

from typing import Any

import pytest
from playwright.sync_api import expect

from annotation.crowd.services import studies
from annotation.imports.published.datasets import DATASETS
from annotation.models import Participant, ValidatorStatus, Vote
from annotation.projects.services import project_create
from tests.browser.conftest import screenshot
from tests.factories import project_creator, submitted_perturbation

pytestmark = pytest.mark.browser
PID = "60f1a2b3c4d5e6f7a8b9c0d1"


@pytest.fixture
def study(project, people):  # type: ignore[no-untyped-def]
    """A study of 20 items in a project without gates: eight perturbations to label."""
    project.settings = {**project.settings, "control_rate": 0}
    project.save()
    for _ in range(8):
        submitted_perturbation(project, people["expert"])
    return studies.study_create(project=project, actor=people["admin"], name="Pilot",
                                platform="prolific", items_per_participant=20)  # fmt: skip


def arrive(page: Any, study: Any) -> None:
    page.goto(f"/p/{study.project.slug}/study/{study.token}/?PROLIFIC_PID={PID}&STUDY_ID=s1")
    page.click("#start")
    expect(page.locator("#vote-form")).to_be_visible()
    page.wait_for_load_state("networkidle")  # the page's keys are bound


def votes_of_the_participant() -> int:
    return Vote.objects.filter(validator=Participant.objects.get().user).count()


def test_back_then_forward_shows_the_true_count_and_a_fresh_item(study, browser, live_server):
    page = browser.new_context(base_url=live_server.url).new_page()
    page.set_default_timeout(15_000)
    arrive(page, study)
    first = page.locator("#vote-form").get_attribute("data-item")
    for n in range(1, 5):
        page.keyboard.press("1")
        expect(page.locator("#done-count")).to_have_text(str(n))
    page.go_back()  # the study's start page, as it is now
    expect(page.locator("#study-items")).to_contain_text("you have labelled 4 so far")
    page.go_forward()
    expect(page.locator("#counter")).to_contain_text("You have labelled 4 items of 20")
    assert page.locator("#vote-form").get_attribute("data-item") != first
    screenshot(page, "participant-after-back-forward")
    page.wait_for_load_state("networkidle")
    page.keyboard.press("1")
    expect(page.locator("#done-count")).to_have_text("5")
    assert votes_of_the_participant() == 5


def test_a_vote_from_a_stale_second_tab_is_said_and_counted_once(study, browser, live_server):
    context = browser.new_context(base_url=live_server.url)
    context.set_default_timeout(15_000)
    first_tab = context.new_page()
    arrive(first_tab, study)
    second_tab = context.new_page()
    second_tab.goto(f"/p/{study.project.slug}/validate/")
    second_tab.wait_for_load_state("networkidle")
    stale = second_tab.locator("#vote-form").get_attribute("data-item")
    assert stale == first_tab.locator("#vote-form").get_attribute("data-item")  # one lease
    for n in (1, 2):
        first_tab.keyboard.press("1")
        expect(first_tab.locator("#done-count")).to_have_text(str(n))
    second_tab.bring_to_front()
    second_tab.keyboard.press("1")  # the first item again, as the first tab voted on it
    expect(second_tab.locator("#vote-notice")).to_contain_text(
        "You already voted on this item; your vote was counted once"
    )
    expect(second_tab.locator("#done-count")).to_have_text("2")
    expect(second_tab.locator("#items-left")).to_have_text("6")  # of 8: the page fetched afresh
    assert second_tab.locator("#vote-form").get_attribute("data-item") != stale
    screenshot(second_tab, "participant-stale-tab")
    assert votes_of_the_participant() == 2
    # A different answer on it is refused, and said after the page is fetched afresh.
    second_tab.goto(f"/p/{study.project.slug}/validate/")
    second_tab.wait_for_load_state("networkidle")
    second_tab.evaluate(
        """(item) => { const form = document.getElementById("vote-form");
        form.dataset.item = item; form.querySelector('button[data-key="2"]').click(); }""",
        stale,
    )
    expect(second_tab.locator("#vote-notice")).to_contain_text("votes cannot change")
    expect(second_tab.locator("#done-count")).to_have_text("2")
    assert votes_of_the_participant() == 2


def test_a_participant_reads_no_developer_note_and_no_admin_to_ask(browser, live_server):
    admin = project_creator()
    project = project_create(user=admin, slug="imdb", **DATASETS["imdb"].template())
    project.settings = {**project.settings, "gold_rate": 0.2}
    project.save()
    study = studies.study_create(project=project, actor=admin, name="Pilot",
                                 platform="prolific", items_per_participant=20)  # fmt: skip
    page = browser.new_context(base_url=live_server.url).new_page()
    page.set_default_timeout(15_000)
    page.goto(f"/p/imdb/study/{study.token}/?PROLIFIC_PID={PID}&STUDY_ID=s1")
    expect(page.locator("#study-guidelines")).to_contain_text("Imported as published")
    expect(page.locator("body")).not_to_contain_text("docs/")
    participant = Participant.objects.get()
    ValidatorStatus.objects.create(project=project, validator=participant.user, paused=True)
    page.goto("/p/imdb/validate/")
    expect(page.locator("#work-ended")).to_contain_text("Your work on this study has ended")
    expect(page.locator("body")).not_to_contain_text("admin")
    screenshot(page, "participant-work-ended")


def test_a_vote_after_the_work_ended_leads_to_why_in_a_participants_words(study, browser,
                                                                          live_server):  # fmt: skip
    page = browser.new_context(base_url=live_server.url).new_page()
    page.set_default_timeout(15_000)
    arrive(page, study)
    participant = Participant.objects.get()
    ValidatorStatus.objects.create(project=study.project, validator=participant.user, paused=True)
    page.keyboard.press("1")  # from the page left open: refused (403)
    expect(page.locator("#work-ended")).to_contain_text("Your work on this study has ended")
    expect(page.locator("body")).not_to_contain_text("admin")
    assert votes_of_the_participant() == 0
