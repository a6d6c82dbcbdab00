import pytest

from annotation.models import Example
from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser


def test_admin_previews_chooses_columns_and_labels_then_imports(
    page, login, project, people, tmp_path
):
    """The file's own headers and label values are offered in dropdowns; the first rows show
    as they will be read; a bad row rejects the file with its line, beside the preview."""
    data = tmp_path / "reviews.tsv"
    data.write_text("Review\tSentiment\tSource\nA fine film.\tPos\timdb\nA dull film.\tNeg\timdb\n")
    login("alice")
    page.goto(f"/p/{project.slug}/import/")
    page.set_input_files("input[name=file]", str(data))
    page.click("button:has-text('Preview')")
    page.locator("#mapping").wait_for()
    assert page.input_value("#map_text") == "Review"  # a usual name for a text
    assert page.input_value("#map_label") == "Sentiment"
    rows = page.locator("#preview-rows tbody tr")
    assert "unknown label 'Pos'" in rows.first.inner_text()
    page.select_option("select[aria-label='Label for Pos']", "positive")
    page.select_option("select[aria-label='Label for Neg']", "negative")
    page.click("button:has-text('Update the preview')")
    page.locator("#preview-rows").wait_for()
    assert page.locator("#preview-rows tbody tr").first.inner_text().split("\t")[2:4] == [
        "A fine film.", "positive"
    ]  # fmt: skip
    screenshot(page, "import-preview")
    assert not Example.objects.filter(project=project).exists()  # a preview imports nothing
    page.click("button:has-text('Import 2 rows')")
    page.get_by_role("status").wait_for()
    assert "Imported 2 examples from reviews.tsv" in page.get_by_role("status").inner_text()
    assert sorted(Example.objects.values_list("label", flat=True)) == ["negative", "positive"]

    bad = tmp_path / "bad.csv"
    bad.write_text("id,text,label\nc,<b>Nice</b> film.,positive\nd,Dull.,boring\n")
    page.set_input_files("input[name=file]", str(bad))
    page.click("button:has-text('Preview')")
    page.select_option("select[aria-label='Label for boring']", "")
    page.click("button:has-text('Import 2 rows')")
    errors = page.locator("#import-errors")
    errors.wait_for()
    assert "nothing was imported" in errors.inner_text()
    assert "unknown label 'boring'" in errors.inner_text()
    assert errors.locator("td").first.inner_text() == "3"
    assert page.locator("#mapping").is_visible()  # the choices stay, to fix and try again
    screenshot(page, "import-errors")
    assert Example.objects.filter(project=project).count() == 2
    page.goto(f"/p/{project.slug}/")
    assert "2 originals in all" in page.inner_text("main")
