"""Settings saved in the browser (issue 59): saving them unchanged makes no guidelines version
and no audit entry; a change is logged with what it was and what it became, in words, on the
audit page."""

import pytest
from playwright.sync_api import expect

from annotation.imports.published.datasets import DATASETS
from annotation.models import AuditLog, Guidelines
from annotation.projects.services import project_create
from tests.browser.conftest import screenshot
from tests.factories import UserFactory

pytestmark = pytest.mark.browser


def test_saving_settings_unchanged_changes_nothing_and_a_change_is_told(page, login):
    admin = UserFactory(username="ada")
    project = project_create(user=admin, slug="imdb", **DATASETS["imdb"].template())
    assert "\n" in project.current_guidelines().text  # several lines, as a textarea sends them
    login("ada")
    page.goto("/p/imdb/settings/")
    page.click("#project-form button.primary")
    expect(page.locator(".messages")).to_contain_text("saved")
    assert list(Guidelines.objects.filter(project=project).values_list("version", flat=True)) == [1]
    assert list(AuditLog.objects.filter(project=project).values_list("action", flat=True)) == [
        "project_created"
    ]

    page.fill("input[name=setting_max_edit_ratio]", "0.7")
    page.fill("textarea[name=guidelines]", "Flip the label with few words.")
    page.click("#project-form button.primary")
    expect(page.locator(".messages")).to_contain_text("saved")
    assert Guidelines.objects.filter(project=project).count() == 2
    page.goto("/p/imdb/audit/")
    details = page.locator("#audit tbody tr").first
    expect(details).to_contain_text("max_edit_ratio: 0.6 → 0.7")
    expect(details).to_contain_text("guidelines: version 1 → version 2")
    expect(details).not_to_contain_text("[")  # no Python list or dict dumped
    screenshot(page, "audit-in-words")


@pytest.mark.parametrize(
    "dataset, folder, names",
    [
        ("imdb", "imdb-contrast", ["test_original.tsv", "test_contrast.tsv"]),
        ("quoref", "gardner-contrast-sets", ["quoref_original_subset_20191206_merged.json",
                                             "quoref_test_perturbations_20191206_merged.json"]),
    ],
)  # fmt: skip
def test_a_real_published_projects_settings_saved_unchanged_log_nothing(
    page, login, shared_data, settings, tmp_path, dataset, folder, names
):
    from annotation.imports.published.services import import_published

    settings.MEDIA_ROOT = tmp_path / "media"
    admin = UserFactory(username="ada")
    files = [(name, (shared_data / folder / name).read_bytes()) for name in names]
    project = import_published(dataset=dataset, files=files, user=admin).project
    logged = AuditLog.objects.filter(project=project).count()
    login("ada")
    page.goto(f"/p/{project.slug}/settings/")
    page.click("#project-form button.primary")
    expect(page.locator(".messages")).to_contain_text("saved")
    assert Guidelines.objects.filter(project=project).count() == 1
    assert AuditLog.objects.filter(project=project).count() == logged
