"""The Models page's form shows the settings of the kind chosen, and only staff are offered
a Python callable."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser


def setting(page, name: str):  # type: ignore[no-untyped-def]
    return page.locator(f"#model-form [name={name}]")


def test_the_form_shows_each_kinds_own_settings(page, login, project, people):
    login(people["admin"].username)
    page.goto(f"/p/{project.slug}/models/")
    kinds = page.locator("select[name=kind] option").evaluate_all("os => os.map(o => o.value)")
    assert "python" not in kinds  # an admin who is not staff may not make a worker run code

    page.select_option("select[name=kind]", "openai-compatible")
    for name in ("base_url", "api_key", "concurrency", "prompt", "max_new_tokens"):
        expect(setting(page, name)).to_be_visible()
    for name in ("label_mapping", "stride", "device", "num_beams", "allow_random_weights"):
        expect(setting(page, name)).to_be_hidden()
    screenshot(page, "model-form-served")

    page.select_option("select[name=kind]", "hf-sequence-classification")
    for name in ("label_mapping", "max_length", "batch_size", "device", "allow_random_weights"):
        expect(setting(page, name)).to_be_visible()
    for name in ("base_url", "prompt", "stride", "max_new_tokens"):
        expect(setting(page, name)).to_be_hidden()

    page.select_option("select[name=kind]", "hf-question-answering")
    expect(setting(page, "stride")).to_be_visible()
    expect(setting(page, "label_mapping")).to_be_hidden()
    for name in ("name", "source"):  # every kind's
        expect(setting(page, name)).to_be_visible()


def test_staff_are_offered_a_python_callable(page, login, project, staff):
    login(staff.username)
    page.goto(f"/p/{project.slug}/models/")
    page.select_option("select[name=kind]", "python")
    expect(setting(page, "label_mapping")).to_be_visible()
    expect(setting(page, "base_url")).to_be_hidden()
