"""Every page of the demo, as each role sees it, in Chromium (issue 11): it answers 200, shows
content, runs its scripts without an error, and leaves a screenshot in screenshots/."""

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from annotation.authoring.services.claims import pivot_claim
from annotation.demo import DEMO_PASSWORD, DEMO_SLUG, QA_SLUG
from annotation.models import Example, Perturbation, Project, Release
from evaluation.models import EvaluationRun
from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser


def test_every_page_of_the_demo_for_each_role(page, login, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("load_demo", stdout=StringIO())
    project = Project.objects.get(slug=DEMO_SLUG)
    release = Release.objects.get(project=project)
    run = EvaluationRun.objects.get(release=release, model__name="Keyword baseline")
    pivot = Example.objects.get(project=project, external_id="demo-30")
    pivot_claim(pivot=pivot, expert=User.objects.get(username="expert1"))  # the editor needs one
    accepted = Perturbation.objects.filter(project=project, status="accepted").first()
    base = f"/p/{DEMO_SLUG}"
    admin_pages = {
        "dashboard": (f"{base}/", "agreement"),
        "members": (f"{base}/members/", "validator6"),
        "import": (f"{base}/import/", "Import"),
        "set-import": (f"{base}/import/sets/", "sets.jsonl"),
        "vote-import": (f"{base}/import/votes/", "label_distribution"),
        "settings": (f"{base}/settings/", "Validation and authoring"),
        "validators": (f"{base}/validators/", "validator1"),
        "studies": (f"{base}/studies/", "Study links"),
        "disputes": (f"{base}/disputes/", "Reopen for 2 more votes"),
        "releases": (f"{base}/releases/", "demo-1"),
        "release": (f"{base}/releases/{release.pk}/", "demo-1"),
        "models": (f"{base}/models/", "Keyword baseline"),
        "prompt": (f"{base}/models/prompt/", "Words for"),
        "runs": (f"{base}/evaluations/", "Keyword baseline"),
        "run": (f"{base}/evaluations/{run.pk}/", "Consistency"),
        "compare": (f"{base}/evaluations/compare/", "Accuracy on originals"),
        "analyses": (f"{base}/analyses/", "Analyses"),
        "reading-dashboard": (f"/p/{QA_SLUG}/", "Dashboard"),
        "data": (f"{base}/data/", "demo-01"),
        "data-originals": (f"{base}/data/?kind=originals", "demo-30"),
        "data-item": (f"{base}/data/perturbations/{accepted.pk}/", "voted"),
        "audit": (f"{base}/audit/", "release"),
    }
    expert_pages = {
        "projects": ("/", "Demo: review sentiment"),
        "pivots": (f"{base}/pivots/", "Claim & edit"),
        "editor": (f"{base}/pivots/{pivot.pk}/edit/", "The hotel pool was closed"),
        "my-work": (f"{base}/mine/", "demo-01"),
        "data": (f"{base}/data/", "demo-01"),
    }
    validator_pages = {"validate": (f"{base}/validate/", "Validate")}
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    for user, pages in (("admin", admin_pages), ("expert1", expert_pages),
                        ("validator6", validator_pages)):  # fmt: skip
        page.context.clear_cookies()
        login(user, DEMO_PASSWORD)
        for name, (path, expected) in pages.items():
            errors.clear()
            response = page.goto(path)
            page.wait_for_load_state("networkidle")  # charts and htmx have run
            assert response is not None and response.status == 200, (user, name)
            assert not errors, (user, name, errors)
            assert expected.lower() in page.inner_text("main").lower(), (user, name, expected)
            screenshot(page, f"every-{user}-{name}")
