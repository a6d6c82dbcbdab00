"""At a phone's width (390 px) the project list shows every column it keeps, and no title
runs off the screen."""

import pytest

from evaluation.models import EvaluationRun, ModelSpec
from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser


def test_pages_fit_a_phone(page, login, project, people, released):
    name, source = "a-rather-long-model-name-v2-instruct", "tests.evaluation.rule_models:keyword"
    spec = ModelSpec.objects.create(project=project, name=name, kind="python", source=source)
    run = EvaluationRun.objects.create(release=released, model=spec, split="test")
    page.set_viewport_size({"width": 390, "height": 800})
    login("alice")
    for path in ("/", f"/p/{project.slug}/evaluations/{run.pk}/", f"/p/{project.slug}/data/"):
        page.goto(path)
        overflow = page.evaluate("document.documentElement.scrollWidth")
        title = page.locator("h1").bounding_box()
        assert title is not None and title["x"] + title["width"] <= 390, (path, title)
        if path != f"/p/{project.slug}/evaluations/{run.pk}/":
            assert overflow <= 390, (path, overflow)
        if path == "/":
            roles = page.locator("#projects td").last.bounding_box()
            assert roles is not None and roles["x"] + roles["width"] <= 390
    screenshot(page, "phone-data")
