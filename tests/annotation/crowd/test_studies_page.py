"""The Studies page (issue 49, second walk): a refused form keeps what the admin typed,
comprehension questions name labels in any case and are stored in the project's spelling, and
the crowd setup is a link away (docs/validation.md, served as the page's guide)."""

import html
import json

import pytest
from django.test import Client

from annotation.models import Study

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(people):  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(people["admin"])
    return client


def test_refused_questions_stay_in_the_form_with_the_reason(crowd_project, admin):
    url = f"/p/{crowd_project.slug}/settings/questions/"  # the Studies page's questions form
    typed = (
        '{"fields": {"text": "Loved it."}, "label": "positive"}\n'
        '{"fields": {"text": "Meh."}, "label": "great"}'
    )
    answer = admin.post(url, {"questions": typed})
    page = answer.content.decode()
    assert answer.status_code == 400
    assert 'id="questions-error">qualification question 2: &#x27;great&#x27; is not one of' in page
    textarea = page.split('<textarea name="questions"')[1].split("</textarea>")[0]
    assert html.unescape(textarea.split(">", 1)[1]) == typed
    assert crowd_project.setting("qualification_questions") == []
    # Not JSON at all: the same.
    answer = admin.post(url, {"questions": "{oops"})
    assert answer.status_code == 400 and "{oops</textarea>" in answer.content.decode()


def test_a_refused_study_keeps_what_was_typed(crowd_project, admin):
    answer = admin.post(f"/p/{crowd_project.slug}/studies/", {"name": "Wave 2",
                        "platform": "mturk", "items_per_participant": "50000",
                        "completion_code": "MY-CODE"})  # fmt: skip
    page = answer.content.decode()
    assert answer.status_code == 400 and 'id="study-error">items_per_participant is from' in page
    assert 'value="Wave 2"' in page and 'value="MY-CODE"' in page and 'value="50000"' in page
    assert '<option value="mturk" selected>' in page
    assert not Study.objects.exists()


def test_question_labels_match_in_any_case_and_keep_the_projects_spelling(crowd_project, admin):
    typed = [{"fields": {"text": "Loved it."}, "label": "Positive"},
             {"fields": {"text": "Awful."}, "label": " NEGATIVE "}]  # fmt: skip
    lines = "\n".join(json.dumps(q) for q in typed)
    answer = admin.post(
        f"/p/{crowd_project.slug}/settings/questions/", {"questions": lines}, follow=True
    )
    page = answer.content.decode()
    assert "2 comprehension questions saved." in page  # back on the Studies page, its form
    assert f'id="questions-form" action="/p/{crowd_project.slug}/settings/questions/"' in page
    crowd_project.refresh_from_db()
    stored = crowd_project.setting("qualification_questions")
    assert [q["label"] for q in stored] == ["positive", "negative"]
    assert '"label": "positive"' in answer.content.decode().replace("&quot;", '"')


def test_labels_that_differ_only_in_case_are_matched_exactly(people):
    from annotation.errors import DomainError
    from annotation.projects.services import project_update
    from tests.factories import ProjectFactory

    project = ProjectFactory(slug="cased", labels=["Yes", "yes"], extra_labels=[])
    question = {"fields": {"text": "x"}, "label": "yes"}
    project_update(project=project, user=people["admin"],
                   settings={"qualification_questions": [question]})  # fmt: skip
    assert project.setting("qualification_questions")[0]["label"] == "yes"
    shouted = {"qualification_questions": [{**question, "label": "YES"}]}
    with pytest.raises(DomainError, match="'YES' is not one of"):
        project_update(project=project, user=people["admin"], settings=shouted)


def test_the_studies_page_links_the_crowd_setup_guide(crowd_project, admin, people):
    page = admin.get(f"/p/{crowd_project.slug}/studies/").content.decode()
    guide = f"/p/{crowd_project.slug}/studies/guide/"
    assert f'<a href="{guide}" id="guide-link">' in page
    answer = admin.get(guide)
    text = answer.content.decode()
    assert answer.status_code == 200
    assert "Step by step, on <strong>Prolific</strong>" in text
    assert "On <strong>Mechanical Turk</strong>" in text
    assert "<code>?PROLIFIC_PID={{%PROLIFIC_PID%}}" in text
    # Links to other files of the repository are named, not linked (they are not served).
    assert "security (<code>docs/security.md</code>)" in text
    assert 'href="security.md"' not in text
    for who in ("validator", "expert"):
        other = Client()
        other.force_login(people[who])
        assert other.get(guide).status_code in (403, 404)
