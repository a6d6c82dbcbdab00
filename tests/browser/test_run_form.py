"""Launching a run: the split list offers the splits of the chosen release only."""

import pytest
from playwright.sync_api import expect

from annotation.models import Perturbation
from annotation.releases.services import release_create

pytestmark = pytest.mark.browser


def test_the_split_list_follows_the_chosen_release(page, login, project, people, released):
    Perturbation.objects.filter(project=project).update(status="accepted")
    halves = {"dev": 0.5, "test": 0.5}
    both = release_create(project=project, user=people["admin"], version="2.0",
                          split_strategy="random", seed=1, proportions=halves)  # fmt: skip
    assert set(both.counts["sets"]) == {"dev", "test"}
    assert set(released.counts["sets"]) == {"test"}
    login("alice")
    page.goto(f"/p/{project.slug}/evaluations/")
    form = page.locator("#predictions-form")
    offered = form.locator("select[name=split] option:not([disabled])")
    form.locator("select[name=release]").select_option(label="1.0")
    expect(offered).to_have_text(["test"])  # the script disables the splits 1.0 lacks
    form.locator("select[name=release]").select_option(label="2.0")
    expect(offered).to_have_text(["test", "dev"])
    expect(form.locator("select[name=split] option")).to_have_text(["test", "dev"])
