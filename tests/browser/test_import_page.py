import pytest

from annotation.models import Example
from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser


def test_admin_sees_import_errors_inline_then_imports(page, login, project, people, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,text,label\na,<b>Nice</b> film.,positive\nb,Dull.,boring\n")
    good = tmp_path / "good.csv"
    good.write_text("id,text,label\na,Nice film.,positive\nb,Dull film.,negative\n")

    login("alice")
    page.goto(f"/p/{project.slug}/import/")
    page.set_input_files("input[name=file]", str(bad))
    page.click("button:has-text('Import')")
    errors = page.locator("#import-errors")
    errors.wait_for()
    assert "nothing was imported" in errors.inner_text()
    assert "unknown label 'boring'" in errors.inner_text()
    assert errors.locator("td").first.inner_text() == "3"
    screenshot(page, "import-errors")
    assert not Example.objects.filter(project=project).exists()

    page.set_input_files("input[name=file]", str(good))
    page.click("button:has-text('Import')")
    page.get_by_role("status").wait_for()
    assert "Imported 2 examples from good.csv" in page.get_by_role("status").inner_text()
    assert Example.objects.filter(project=project).count() == 2
    page.goto(f"/p/{project.slug}/")
    assert "2 originals in all" in page.inner_text("main")
