import pytest
from playwright.sync_api import expect

from annotation.models import Vote
from tests.browser.conftest import screenshot
from tests.factories import submitted_perturbation

pytestmark = pytest.mark.browser


def test_validator_labels_five_items_by_keyboard_alone(page, login, project, people):
    project.settings = {**project.settings, "control_rate": 0}
    project.save()
    for _ in range(6):
        submitted_perturbation(project, people["expert"])
    login("victor")
    page.goto(f"/p/{project.slug}/validate/")
    assert not page.locator("#undo-form").is_visible()  # nothing to undo yet
    keys = ["2", "2", "1", "3", "2"]  # negative, negative, positive, mixed (extra), negative
    for done, key in enumerate(keys):
        expect(page.locator("#done-count")).to_have_text(str(done))
        shown = page.inner_text(".item-text")
        if done == 1:
            page.keyboard.press("m")  # flag: not minimal
            screenshot(page, "validate")
        page.keyboard.press(key)  # the vote goes to the API; the next item comes in its answer
        expect(page.locator("#done-count")).to_have_text(str(done + 1))
        if done < 4:
            expect(page.locator(".item-text")).not_to_have_text(shown)  # swapped, no page load
            expect(page.locator("input[name=flags]:checked")).to_have_count(0)
    expect(page.locator("#counter")).to_contain_text("You have labelled 5 items")
    votes = list(Vote.objects.filter(validator=people["validator"]).order_by("id"))
    assert [v.label for v in votes] == ["negative", "negative", "positive", "mixed", "negative"]
    assert votes[1].flags == ["not_minimal"] and votes[0].flags == []
    with page.expect_navigation():
        page.keyboard.press("z")  # undo the last vote: its item is still open
    assert "You have labelled 4 items" in page.inner_text("#counter")
    assert Vote.objects.filter(validator=people["validator"]).count() == 4
    assert page.inner_text("#items-left") == "2"
    page.keyboard.press("2")  # the same item again, labelled again
    expect(page.locator("#done-count")).to_have_text("5")
    with page.expect_navigation():
        page.keyboard.press("s")
    assert "skipped 1" in page.inner_text("#counter")
    assert page.locator("#queue-empty").count() == 1


def test_admin_dashboard_shows_agreement_charts(page, login, project, people):
    project.settings = {**project.settings, "control_rate": 0}
    project.save()
    from annotation.validation.services.votes import vote_cast
    from tests.factories import member

    crowd = [member(project, f"c{i}", "validator") for i in range(5)]
    for n in range(3):
        item = submitted_perturbation(project, people["expert"]).item
        for i, validator in enumerate(crowd):
            vote_cast(
                project=item.project,
                item_id=item.pk,
                validator=validator,
                label="negative" if i < 3 + n % 2 else "positive",
            )
    login("alice")
    page.goto(f"/p/{project.slug}/")
    page.locator("#agreement").wait_for()
    assert "Fleiss" in page.inner_text("#agreement")
    expect(page.locator("canvas")).to_have_count(4)
    drawn = page.evaluate(
        "Array.from(document.querySelectorAll('canvas')).map(c => Chart.getChart(c) !== undefined)"
    )
    assert drawn == [True, True, True, True]
    screenshot(page, "dashboard")


def test_admin_dashboard_draws_its_charts_with_legends(page, login, project, people):
    from tests.factories import member, submitted_perturbation, vote_all

    crowd = [member(project, f"dash_v{i}", "validator") for i in range(5)]
    vote_all(submitted_perturbation(project, people["expert"]).item, crowd, ["negative"] * 5)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    login("alice")
    page.goto(f"/p/{project.slug}/")
    page.locator("canvas").nth(2).wait_for()
    legends = page.evaluate(
        "Array.from(document.querySelectorAll('canvas')).filter(c => Chart.getChart(c))"
        ".map(c => Chart.getChart(c).data.datasets[0].label)"
    )
    assert "counted votes" in legends and all(legends), legends
    assert errors == []
