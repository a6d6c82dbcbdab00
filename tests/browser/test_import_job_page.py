"""A background import's page: cancelled, retried, and failed with its reason, from its own
buttons (the one cancel/retry action every kind of job shares)."""

import pytest
from playwright.sync_api import expect

from annotation.imports.services.running import run_import
from annotation.models import Example, ImportJob
from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser


def test_an_admin_cancels_retries_and_reads_why_an_import_failed(
    page, login, project, people, settings, tmp_path
):
    settings.IMPORT_BACKGROUND_BYTES = 10  # a worker's import; none runs here until we say
    settings.MEDIA_ROOT = tmp_path / "media"
    data = tmp_path / "reviews.csv"
    data.write_text("text,label\nA fine film.,positive\nA dull film.,negative\n")
    login("alice")
    page.goto(f"/p/{project.slug}/import/")
    page.set_input_files("input[name=file]", str(data))
    page.click("button:has-text('Preview')")
    page.click("button:has-text('Import 2 rows')")
    expect(page.locator("#import-status")).to_have_text("queued")
    page.click("#cancel-import")
    expect(page.get_by_role("alert")).to_have_text("Cancelled; nothing was imported")
    page.click("#retry-import")
    expect(page.locator("#import-status")).to_have_text("queued")
    # A job its worker cannot run (an option this version no longer takes) fails with why.
    job = ImportJob.objects.get(project=project)
    ImportJob.objects.filter(pk=job.pk).update(options={**job.options, "encoding": "latin-1"})
    run_import(job.pk)
    page.reload()
    expect(page.get_by_role("alert")).to_have_text("The import failed; nothing was imported")
    expect(page.locator("#import-job")).to_contain_text("TypeError")
    screenshot(page, "import-job-failed")
    ImportJob.objects.filter(pk=job.pk).update(options=job.options)
    page.click("#retry-import")
    run_import(job.pk)
    page.reload()
    expect(page.locator("#import-result")).to_contain_text("imported: 2")
    assert Example.objects.filter(project=project).count() == 2
