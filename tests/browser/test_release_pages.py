import pytest

from annotation.models import Perturbation, Release
from tests.browser.conftest import screenshot
from tests.factories import submitted_perturbation

pytestmark = pytest.mark.browser


def test_admin_publishes_downloads_and_diffs_releases(
    page, login, project, people, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    first = submitted_perturbation(project, people["expert"])
    Perturbation.objects.filter(pk=first.pk).update(status="accepted")
    login("alice")
    page.goto(f"/p/{project.slug}/releases/")
    page.fill("input[name=version]", "1.0")
    page.click("button:has-text('Publish')")
    page.wait_for_url("**/releases/*/")
    assert "Release 1.0 published" in page.inner_text(".messages")
    card = page.locator("#dataset-card table").first.inner_text()  # rendered, not raw Markdown
    assert "test\t1\t1\t1\t0" in card
    assert "- config_name: examples" in page.inner_text(".card-header")  # the Hub's header, as is
    assert "load_dataset(" in page.locator("#dataset-card pre code").first.inner_text()
    files = page.inner_text("#dataset-card")  # which files hold what (issue 60)
    assert "lm_eval/: a task per split for lm-evaluation-harness; its docs are the" in files
    with page.expect_download() as download:
        page.click("text=Download the bundle (zip)")
    assert download.value.suggested_filename == f"{project.slug}-1.0.zip"

    second = submitted_perturbation(project, people["expert"])
    Perturbation.objects.filter(pk=second.pk).update(status="accepted")
    page.goto(f"/p/{project.slug}/releases/")
    page.fill("input[name=version]", "1.0")
    page.click("button:has-text('Publish')")
    assert "exists; releases never change" in page.inner_text("main")
    page.fill("input[name=version]", "1.1")
    page.click("button:has-text('Publish')")
    page.wait_for_url("**/releases/*/")
    page.click("button:has-text('Show differences')")
    diff = page.inner_text("#release-diff")
    assert "From 1.0 to 1.1: 1 set(s) added, 0 removed; 1 perturbation(s) added" in diff
    assert f"p-{second.pk}" in diff
    screenshot(page, "release")
    assert Release.objects.count() == 2
