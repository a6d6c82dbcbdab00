"""A published contrast set from the browser alone: New project → a published contrast set,
then its fields as their kinds show them. MATRES's HTML marks are shown sanitised (its colours
and bold kept, a script or a handler dropped) on the validation page and in the editor; NLVR2's
image addresses are shown as images, on the first item and on the next one the page loads."""

import pytest
from playwright.sync_api import expect

from annotation.models import Project
from tests.annotation.imports import published_files
from tests.browser.conftest import screenshot
from tests.factories import UserFactory, member

pytestmark = pytest.mark.browser

HOSTILE = b"<script>alert(1)</script><img src=x onerror=alert(1)>"  # no comma, no quote: CSV


def import_from_the_page(page, tmp_path, dataset, files, validate=True):  # type: ignore[no-untyped-def]
    page.goto("/projects/new/")
    page.click("#from-published")
    page.select_option("select[name=dataset]", dataset)
    for n, (name, content) in enumerate(files, 1):
        path = tmp_path / name
        path.write_bytes(content)
        page.set_input_files(f"input[name=file{n}]", str(path))
    if validate:
        page.check("input[name=to_validation]")
    screenshot(page, f"published-{dataset}-form")
    page.click("#published-form button[type=submit]")


def test_matres_html_and_nlvr2_images_show_as_their_kinds(page, login, tmp_path):
    UserFactory(username="root", is_staff=True, is_superuser=True)
    login("root")
    files, _ = published_files.matres()
    name, content = files[0]
    content = content.replace(b"<strong>said </strong>", b"<strong>said </strong>" + HOSTILE)
    import_from_the_page(page, tmp_path, "matres", [(name, content)])
    page.get_by_role("status").first.wait_for()
    assert "MATRES: test: 2 sets, 3 perturbations." in page.inner_text("main")
    screenshot(page, "published-matres-dashboard")
    matres = Project.objects.get(slug="matres")
    member(matres, "vera", "validator")
    member(matres, "ed", "expert")

    files, _ = published_files.nlvr2()
    import_from_the_page(page, tmp_path, "nlvr2", files)
    page.get_by_role("status").first.wait_for()
    nlvr2 = Project.objects.get(slug="nlvr2")
    vera = matres.memberships.get(user__username="vera").user
    nlvr2.memberships.create(user=vera, role="validator")

    login("vera")
    page.goto("/p/matres/validate/")
    text = page.locator(".item-text").first
    text.locator("strong").first.wait_for()
    assert text.locator("span[style*='color']").count() >= 2  # the two events, coloured
    assert text.locator("script, img").count() == 0
    assert "alert" not in text.inner_text()
    screenshot(page, "published-matres-validate")

    page.goto("/p/nlvr2/validate/")
    images = page.locator(".item-text figure.field-image img")
    expect(images).to_have_count(2)
    first = images.nth(1).get_attribute("src")
    assert first and first.startswith("https://img.example/")
    assert "https://img.example/a.jpg" in page.locator(".item-text figcaption").first.inner_text()
    screenshot(page, "published-nlvr2-validate")
    page.keyboard.press("1")  # a vote; the next item comes from the API's fields_html
    expect(page.locator("#done-count")).to_have_text("1")
    expect(images).to_have_count(2)  # the next item's images, swapped in by the script
    expect(images.nth(1)).not_to_have_attribute("src", first)

    login("ed")
    pivot = matres.examples.get(external_id="1702137622")
    page.goto(f"/p/matres/pivots/{pivot.pk}/edit/")
    page.click("#claim")
    # The editor's script has run (its meter is drawn) before the edit is typed.
    expect(page.locator("#edit-ratio")).to_contain_text("of tokens changed")
    page.locator("#pivot-text strong").first.wait_for()
    assert page.locator("#pivot-text script, #pivot-text img").count() == 0
    edit = "<p>He <span style='color:red'><strong>ran</strong></span>.</p>" + HOSTILE.decode()
    page.fill("#field-text", edit)
    preview = page.locator("#preview-text")
    expect(preview.locator("strong")).to_have_count(1)  # the pivot's two are gone
    expect(preview.locator("strong")).to_have_text("ran")  # the edit, as it will be shown
    assert preview.locator("span").get_attribute("style") == "color: red;"
    assert preview.locator("script, img").count() == 0 and "alert" not in preview.inner_text()
    screenshot(page, "published-matres-editor")


def test_the_form_shows_only_the_chosen_datasets_file_inputs(page, login, tmp_path):
    """The walk of issue 47: four file inputs whatever the dataset. BoolQ takes one file,
    Quoref two, IMDb four: the page shows that many, and a file given for an input that goes
    away is not sent (the import of one BoolQ file still works)."""
    UserFactory(username="root", is_staff=True, is_superuser=True)
    login("root")
    page.goto("/projects/new/published/")
    inputs = [page.locator(f"input[name=file{n}]") for n in range(1, 5)]

    def visible() -> list[bool]:
        return [i.is_visible() for i in inputs]

    for dataset, count in (("boolq", 1), ("quoref", 2), ("imdb", 4), ("matres", 1)):
        page.select_option("select[name=dataset]", dataset)
        assert visible() == [n < count for n in range(4)], dataset
    page.select_option("select[name=dataset]", "quoref")
    stray = tmp_path / "stray.json"
    stray.write_text("{}")
    page.set_input_files("input[name=file2]", str(stray))
    screenshot(page, "published-form-quoref")
    page.select_option("select[name=dataset]", "boolq")  # file2 goes away, and its file
    (name, content), *_ = published_files.boolq()[0]
    (tmp_path / name).write_bytes(content)
    page.set_input_files("input[name=file1]", str(tmp_path / name))
    page.click("#published-form button[type=submit]")
    page.get_by_role("status").first.wait_for()
    assert Project.objects.filter(slug="boolq").exists()  # the stray second file was not sent


def test_a_refused_import_shows_its_one_line_where_the_page_opens(page, login, tmp_path):
    """The walk: Quoref's files swapped gave 50 near-identical lines in a card 1,400 px below
    the top, off the screen. Now one line, in view when the page comes back."""
    UserFactory(username="root", is_staff=True, is_superuser=True)
    login("root")
    page.set_viewport_size({"width": 1280, "height": 900})
    files, _ = published_files.quoref()
    import_from_the_page(page, tmp_path, "quoref", files[::-1], validate=False)
    errors = page.locator("#import-errors")
    expect(errors).to_contain_text("the files look swapped")
    expect(errors.locator("tbody tr")).to_have_count(1)
    assert errors.is_visible() and page.evaluate("window.scrollY") == 0
    box = errors.bounding_box()
    assert box is not None and box["y"] + 80 < 900  # its first line lies inside the window
    screenshot(page, "published-quoref-swapped")
    assert not Project.objects.filter(slug="quoref").exists()
