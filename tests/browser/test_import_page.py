import pytest
from playwright.sync_api import expect

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
    expect(page.locator("#map_text")).to_have_value("Review")  # a usual name for a text
    expect(page.locator("#map_label")).to_have_value("Sentiment")
    rows = page.locator("#preview-rows tbody tr")
    expect(rows.first).to_contain_text("unknown label 'Pos'")
    page.select_option("select[aria-label='Label for Pos']", "positive")
    page.select_option("select[aria-label='Label for Neg']", "negative")
    page.click("button:has-text('Update the preview')")
    # The preview is replaced: wait for the new rows, not for the table the old page had.
    cells = rows.first.locator("td")
    expect(cells.nth(2)).to_have_text("A fine film.")
    expect(cells.nth(3)).to_have_text("positive")
    screenshot(page, "import-preview")
    assert not Example.objects.filter(project=project).exists()  # a preview imports nothing
    page.click("button:has-text('Import 2 rows')")
    expect(page.get_by_role("status")).to_contain_text("Imported 2 examples from reviews.tsv")
    assert sorted(Example.objects.values_list("label", flat=True)) == ["negative", "positive"]

    bad = tmp_path / "bad.csv"
    bad.write_text("id,text,label\nc,<b>Nice</b> film.,positive\nd,Dull.,boring\n")
    page.set_input_files("input[name=file]", str(bad))
    page.click("button:has-text('Preview')")
    page.select_option("select[aria-label='Label for boring']", "")
    page.click("button:has-text('Import 2 rows')")
    errors = page.locator("#import-errors")
    expect(errors).to_contain_text("nothing was imported")
    expect(errors).to_contain_text("unknown label 'boring'")
    expect(errors.locator("td").first).to_have_text("3")
    expect(page.locator("#mapping")).to_be_visible()  # the choices stay, to fix and try again
    screenshot(page, "import-errors")
    assert Example.objects.filter(project=project).count() == 2
    page.goto(f"/p/{project.slug}/")
    assert "2 originals in all" in page.inner_text("main")
