"""Browser tests: Playwright for Python driving Debian's Chromium against a live server."""

from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():  # type: ignore[no-untyped-def]
    if not CHROMIUM.exists():
        pytest.fail("Chromium is missing: apt-get install chromium (see .ci/run).")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, transactional_db, live_server):  # type: ignore[no-untyped-def]
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture
def login(page):  # type: ignore[no-untyped-def]
    def log_in(username: str, password: str = "pw") -> None:
        page.goto("/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", password)
        page.keyboard.press("Enter")
        page.wait_for_url(lambda url: "/accounts/login/" not in url)

    return log_in


def assert_within_card(card, cells, width: int) -> None:  # type: ignore[no-untyped-def]
    """At a phone's `width`: `card` does not scroll sideways, and each of `cells` (locators)
    ends inside the card and the screen."""
    assert card.evaluate("e => e.scrollWidth <= e.clientWidth"), "the table scrolls in its card"
    box = card.bounding_box()
    assert box is not None
    edge = min(box["x"] + box["width"], width) + 1
    for n, cell in enumerate(cells):
        place = cell.bounding_box()
        assert place is not None and place["x"] + place["width"] <= edge, (n, place)


def screenshot(page, name: str) -> Path:  # type: ignore[no-untyped-def]
    SCREENSHOTS.mkdir(exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
