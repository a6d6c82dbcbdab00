"""From nothing to a project with members, in the browser alone: New project from each
template, Settings, the Import page, and a validator invited by a pasted line who sets a
password through the one-time link and reaches the Validate page. And the Validators page at
DynaSent's scale (1,280 validators) stays under three screens."""

import json

import pytest
from playwright.sync_api import expect

from annotation.imports.services.votes import import_votes
from annotation.models import Example, Perturbation, Project, Release, Vote
from tests.browser.conftest import screenshot
from tests.factories import project_creator

pytestmark = pytest.mark.browser


def test_a_creator_sets_up_projects_and_invites_a_validator_from_the_pages(
    page, login, tmp_path, settings
):
    settings.MEDIA_ROOT = tmp_path / "media"
    project_creator("carla")
    login("carla")
    # Each template makes a working project: 1 click for the template, 2 fields, 1 click;
    # then its originals through the preview: 1 file, 2 clicks.
    files = {
        "qa": "Context\tQuestion\tAnswer\nMarie won in 1903.\tWho won?\tMarie\n",
        "pairs": "source\ttext\tlabel\nDer Hund bellt.\tThe dog barks.\tacceptable\n",
    }
    for template, slug in (("Free-text QA", "qa"), ("Minimal pairs", "pairs")):
        page.goto("/")
        page.click("#new-project")
        page.click(f"text={template}")
        page.fill("input[name=name]", f"Project {slug}")
        page.fill("input[name=slug]", slug)
        page.click("button:has-text('Create project')")
        page.wait_for_url(f"**/p/{slug}/import/")
        (tmp_path / f"{slug}.tsv").write_text(files[slug])
        page.set_input_files("input[name=file]", str(tmp_path / f"{slug}.tsv"))
        page.click("button:has-text('Preview')")
        page.click("button:has-text('Import 1 row')")
        page.get_by_role("status").wait_for()
    assert Example.objects.get(project__slug="qa").answers == ["Marie"]  # "Answer" guessed
    assert Example.objects.get(project__slug="pairs").fields["source"] == "Der Hund bellt."
    assert Project.objects.get(slug="qa").task_type == "free_text"
    assert Project.objects.get(slug="pairs").fields[0] == {"name": "source", "kind": "text",
                                                           "editable": False}  # fmt: skip

    page.goto("/")
    page.click("#new-project")
    assert page.input_value("textarea[name=labels]") == "negative\npositive"
    page.fill("input[name=name]", "Reviews")
    page.fill("input[name=slug]", "reviews")
    page.fill("input[name='tag-2-name']", "tense")
    page.fill("input[name='tag-2-description']", "past to present")
    page.fill("textarea[name=guidelines]", "# Flip it\n\nChange **few** words.")
    page.click("button:has-text('Preview')")
    assert page.inner_html("#guidelines-preview").startswith("<h1>Flip it</h1>")
    screenshot(page, "new-project")
    page.click("button:has-text('Create project')")
    page.wait_for_url("**/p/reviews/import/")
    project = Project.objects.get(slug="reviews")
    assert [t.name for t in project.tags.all()] == ["negation", "quantifier", "tense"]

    originals = tmp_path / "originals.csv"
    originals.write_text("id,text,label\na,A fine film.,positive\nb,A dull film.,negative\n")
    page.set_input_files("input[name=file]", str(originals))
    page.click("button:has-text('Preview')")
    page.click("button:has-text('Import 2 rows')")
    page.get_by_role("status").wait_for()
    assert Example.objects.filter(project=project).count() == 2

    page.click("nav.tabs >> text=Settings")
    assert page.is_disabled("select[name=task_type]")  # fixed once examples exist
    page.fill("input[name=setting_votes_per_item]", "3")
    page.fill("input[name=setting_majority]", "2")
    page.click("button:has-text('Save')")
    page.get_by_role("status").wait_for()
    project.refresh_from_db()
    assert (project.setting("votes_per_item"), project.setting("majority")) == (3, 2)

    # Contrast sets through their preview: Gardner's paired TSV layout, sent to validation;
    # then sets.jsonl, accepted as published.
    header = "Sentiment\tText\n"
    (tmp_path / "o.tsv").write_text(header + "Positive\tA fine film.\nNegative\tA dull film.\n")
    (tmp_path / "c.tsv").write_text(header + "Negative\tA poor film.\nPositive\tA keen film.\n")
    page.click("nav.tabs >> text=Import")
    page.click("nav.subnav >> text=contrast sets")
    page.set_input_files("input[name=original]", str(tmp_path / "o.tsv"))
    page.set_input_files("input[name=contrast]", str(tmp_path / "c.tsv"))
    page.click("button:has-text('Preview')")
    assert page.input_value("#map_text") == "Text" and page.input_value("#map_label") == "Sentiment"
    assert "A poor film." in page.inner_text("#preview-sets")
    # Checked as the import will check it, with the sets still shown: no tag yet.
    problems = page.inner_text("#preview-problems")
    assert "lines 2, 3 (2 lines): each perturbation needs at least one tag." in problems
    assert "line 2: lines" not in problems  # the lines named once
    page.fill("input[name=tags]", "negation")
    screenshot(page, "set-import-preview")
    page.click("button:has-text('Import 2 sets')")
    page.get_by_role("status").wait_for()
    assert "Imported 2 perturbations" in page.get_by_role("status").inner_text()
    sets = tmp_path / "sets.jsonl"
    sets.write_text(json.dumps({
        "set_id": "g1", "split": "test",
        "original": {"id": "g1", "fields": {"text": "Good acting."}, "label": "positive"},
        "perturbations": [{"id": "g1-p", "fields": {"text": "Bad acting."}, "label": "negative",
                           "tags": ["negation"]}],
    }) + "\n")  # fmt: skip
    page.select_option("select[name=format]", "sets_jsonl")
    page.set_input_files("input[name=file]", str(sets))
    page.click("button:has-text('Preview')")
    page.check("input[name=accept]")
    page.click("button:has-text('Import 1 set')")
    page.get_by_role("status").wait_for()
    assert Perturbation.objects.filter(project=project, status="accepted").count() == 1

    page.click("nav.tabs >> text=Members")
    page.fill("textarea[name=people]", "vera, vera@example.org")
    page.click("button:has-text('Add people')")
    link = page.input_value("input[aria-label='Link for vera']")
    screenshot(page, "members-added")
    page.click("button:has-text('Log out')")

    page.goto(link)
    page.fill("input[name=new_password1]", "a long pass phrase 42")
    page.fill("input[name=new_password2]", "a long pass phrase 42")
    page.click("button:has-text('Set password')")
    page.get_by_text("Your password is set").wait_for()
    login("vera", "a long pass phrase 42")
    page.goto("/p/reviews/validate/")
    assert "Validate" in page.inner_text("h1")
    page.keyboard.press("1")  # a vote by its key
    expect(page.locator("#done-count")).to_have_text("1")
    assert Vote.objects.filter(validator__username="vera").count() == 1
    page.goto(link)
    assert "This link has been used or has expired" in page.inner_text("main")

    # Release, then download the votes.
    page.click("button:has-text('Log out')")
    login("carla")
    page.goto("/p/reviews/releases/")
    page.fill("input[name=version]", "1.0")
    page.click("button:has-text('Publish')")
    page.wait_for_url("**/releases/*/")
    assert Release.objects.get(project=project).version == "1.0"
    page.click("nav.tabs >> text=Validators")
    with page.expect_download() as download:
        page.click("#downloads >> text=CSV >> nth=0")
    votes = download.value.path().read_text()
    assert votes.startswith("item,split,validator,label") and ",vera,negative," in votes


def test_the_validators_page_with_1280_validators_is_under_three_screens(
    page, login, project, people
):
    """DynaSent's 1,280 workers, each with a few votes on imported items."""
    workers = [f"w{n}" for n in range(1280)]
    lines = []
    for n in range(1280):
        crowd = [workers[(n + k * 97) % 1280] for k in range(5)]
        votes = {"positive": crowd[:3], "negative": crowd[3:]}
        lines.append({"id": f"r{n}", "fields": {"text": f"r {n}"}, "label_distribution": votes})
    data = "\n".join(json.dumps(line) for line in lines).encode()
    import_votes(project=project, user=people["admin"], data=data, source_name="dynasent.jsonl")
    login("alice")
    page.goto(f"/p/{project.slug}/validators/")
    assert "50 of 1280 validators" not in page.inner_text("main")  # the count is of matches
    assert "1280 of 1280 validators" in page.inner_text("main")
    height = page.evaluate("document.documentElement.scrollHeight")
    screenshot(page, "validators-1280")
    assert height < 3 * 900, height
    page.click("th >> text=Votes")  # sorted as numbers
    page.wait_for_url("**sort=votes**")
    page.fill("input[name=q]", "w12")
    page.keyboard.press("Enter")
    page.wait_for_url("**q=w12**")
    names = page.locator("#validators tbody td:first-child").all_inner_texts()
    assert names and all("w12" in name for name in names)
