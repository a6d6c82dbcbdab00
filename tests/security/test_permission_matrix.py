"""Every endpoint and page, for every kind of user: who gets in, who gets 401/403/404.

Each call sends an empty payload, so a user who may not act must be refused before the payload
is looked at (a 400 would mean it was validated first). Nobody ever gets a 5xx.
"""

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.test import APIClient

from annotation.models import ImportBatch, ImportJob, Perturbation, Study, Webhook
from evaluation.models import Analysis, EvaluationRun, ModelSpec
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

MEMBERS = {"validator", "expert", "admin", "staff"}
AUTHORS = {"expert", "admin", "staff"}
ADMINS = {"admin", "staff"}
ROLES = ("anonymous", "outsider", "validator", "expert", "admin", "staff")

# url name: (methods, roles allowed in)
MATRIX = {
    "api-project": (("get", MEMBERS), ("patch", ADMINS), ("delete", ADMINS)),
    "api-items": (("get", AUTHORS),),
    "api-item": (("get", AUTHORS),),
    "api-items-bulk": (("post", ADMINS),),
    "api-audit": (("get", ADMINS),),
    "data": (("get", AUTHORS),),
    "data-item": (("get", AUTHORS),),
    "data-bulk": (("post", ADMINS),),
    "audit": (("get", ADMINS),),
    "batch-undo": (("get", ADMINS),),
    "project-delete": (("post", ADMINS),),
    "api-members": (("get", ADMINS), ("post", ADMINS)),
    "api-examples-import": (("post", ADMINS),),
    "api-pivots": (("get", AUTHORS),),
    "api-pivot-sample": (("post", AUTHORS),),
    "api-pivot-claim": (("post", AUTHORS),),
    "api-perturbations": (("get", AUTHORS), ("post", AUTHORS)),
    "api-perturbation": (("get", AUTHORS), ("patch", AUTHORS)),
    "api-validation-next": (("get", {"validator"}),),
    "api-vote": (("post", {"validator"}), ("delete", {"validator"})),
    "api-stats": (("get", ADMINS),),
    "api-adjudicate": (("post", ADMINS),),
    "api-validators": (("get", ADMINS),),
    "api-validator-qualify": (("post", ADMINS),),
    "api-import-votes": (("post", ADMINS),),
    "api-import-sets": (("post", ADMINS),),
    "api-import-published": (("post", ADMINS),),
    "api-import-job": (("get", ADMINS), ("delete", ADMINS)),
    "api-batch": (("delete", ADMINS),),
    "api-import-job-action": (("post", ADMINS),),
    "import-job-action": (("post", ADMINS),),
    "api-releases": (("get", ADMINS), ("post", ADMINS)),
    "api-release": (("get", ADMINS),),
    "api-release-download": (("get", ADMINS),),
    "api-release-diff": (("get", ADMINS),),
    "api-models": (("post", ADMINS),),
    "api-model-check": (("post", ADMINS),),
    "model-check": (("post", ADMINS),),
    "api-evaluations": (("post", ADMINS),),
    "api-evaluation": (("get", ADMINS),),
    "api-evaluation-predictions": (("get", ADMINS),),
    "api-evaluations-compare": (("get", ADMINS),),
    "api-evaluation-cancel": (("post", ADMINS),),
    "api-evaluation-retry": (("post", ADMINS),),
    "api-results": (("get", ADMINS),),
    "api-results-score": (("post", ADMINS),),
    "results": (("get", ADMINS),),
    "results-score": (("post", ADMINS),),
    "project-dashboard": (("get", MEMBERS),),
    "project-import": (("get", ADMINS), ("post", ADMINS)),
    "project-members": (("get", ADMINS), ("post", ADMINS)),
    "project-settings": (("get", ADMINS), ("post", ADMINS)),
    "api-votes": (("get", ADMINS),),
    "pivots": (("get", AUTHORS),),
    "pivot-sample": (("post", AUTHORS),),
    "pivot-claim": (("post", AUTHORS),),
    "pivot-answer": (("post", AUTHORS),),
    "editor-new": (("get", AUTHORS),),
    "tag-add": (("post", AUTHORS),),
    "editor-draft": (("get", {"expert"}),),  # the author's own draft only
    "perturbation-withdraw": (("post", {"expert"}),),
    "my-work": (("get", AUTHORS),),
    "validate": (("get", {"validator"}),),
    "validate-vote": (("post", {"validator"}),),
    "validate-skip": (("post", {"validator"}),),
    "validate-unskip": (("post", {"validator"}),),
    "validate-undo": (("post", {"validator"}),),
    "validators": (("get", ADMINS),),
    "validator-qualify": (("post", ADMINS),),
    "disputes": (("get", ADMINS),),
    "adjudicate": (("post", ADMINS),),
    "releases": (("get", ADMINS), ("post", ADMINS)),
    "release-detail": (("get", ADMINS),),
    "set-import": (("get", ADMINS), ("post", ADMINS)),
    "vote-import": (("get", ADMINS), ("post", ADMINS)),
    "published-import": (("get", ADMINS), ("post", ADMINS)),
    "import-skipped": (("get", ADMINS),),
    "import-warnings": (("get", ADMINS),),
    "import-job": (("get", ADMINS),),
    "models": (("get", ADMINS), ("post", ADMINS)),
    "prompt": (("get", ADMINS), ("post", ADMINS)),
    "runs": (("get", ADMINS), ("post", ADMINS)),
    "runs-compare": (("get", ADMINS),),
    "run": (("get", ADMINS),),
    "run-progress": (("get", ADMINS),),
    "run-action": (("post", ADMINS),),
    "api-analyses": (("post", ADMINS),),
    "api-analysis": (("get", ADMINS),),
    "api-analysis-cancel": (("post", ADMINS),),
    "api-analysis-retry": (("post", ADMINS),),
    "analyses": (("get", ADMINS), ("post", ADMINS)),
    "analysis": (("get", ADMINS),),
    "analysis-progress": (("get", ADMINS),),
    "analysis-action": (("post", ADMINS),),
    "api-studies": (("get", ADMINS), ("post", ADMINS)),
    "api-study-payments": (("get", ADMINS),),
    "studies": (("get", ADMINS), ("post", ADMINS)),
    "project-questions": (("post", ADMINS),),
    "project-gates": (("post", ADMINS),),
    "study-payments": (("get", ADMINS),),
    "studies-guide": (("get", ADMINS),),
    "api-webhooks": (("get", ADMINS), ("post", ADMINS)),
    "api-webhook": (("delete", ADMINS),),
    "api-webhook-test": (("post", ADMINS),),
    "api-webhook-deliveries": (("get", ADMINS),),
    "webhooks": (("get", ADMINS), ("post", ADMINS)),
    "webhook-delete": (("post", ADMINS),),
    "webhook-test": (("post", ADMINS),),
    # Comments: the perturbation's author (the expert) and admins; a comment's edit is its
    # author's (the expert's, below), its deletion its author's or any admin's. A validator
    # who has not voted on the item finds no thread (tests/security/test_blindness.py), on
    # the API or the thread's own page (a voted validator's, or a mentioned expert's, link:
    # tests/annotation/notifications/test_links.py).
    "api-comments": (("get", AUTHORS), ("post", AUTHORS)),
    "comment-thread": (("get", AUTHORS),),
    "api-comment": (("patch", {"expert"}), ("delete", AUTHORS)),
    "comment-post": (("post", AUTHORS),),
    "comment-edit": (("post", {"expert"}),),
    "comment-delete": (("post", AUTHORS),),
}
# Open to everyone, or filtered per user rather than refused; New project is for staff and
# users granted can_create_projects, whatever their projects (test_setup_pages.py); an
# invitation's link is for the account it names (test_accounts.py); a study's link, its done
# page and leaving are for anyone with the link, as its participant (tests/annotation/crowd/).
NOT_IN_MATRIX = {"login", "logout", "api-token", "api-schema", "api-docs", "api-projects",
                 "project-list", "project-start", "password-set", "password-set-done",
                 "project-new", "project-new-published", "api-import-published-new",
                 "project-join", "study-enter", "study-done", "study-leave"} | {
    # A user's own notifications, filtered per user (test_notifications_access.py)
    "api-notifications", "api-notifications-read", "api-notification-preferences",
    "notifications", "notifications-read", "notifications-preferences"} | {
    # Signing in through the provider: anyone's way in (tests/annotation/test_sso.py)
    "sso-start", "sso-callback"} | {
    # A signed-in user's own API token (tests/annotation/test_auth.py)
    "api-token-page"}  # fmt: skip


def url_names(patterns: list) -> set[str]:
    names: set[str] = set()
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if str(pattern.pattern) != "admin/":
                names |= url_names(pattern.url_patterns)
        elif isinstance(pattern, URLPattern) and pattern.name:
            names.add(pattern.name)
    return names


def test_the_matrix_covers_every_endpoint_and_page():
    assert url_names(get_resolver().url_patterns) == set(MATRIX) | NOT_IN_MATRIX


@pytest.fixture
def world(project, people, released, staff):  # type: ignore[no-untyped-def]
    perturbation = Perturbation.objects.filter(project=project).first()
    spec = ModelSpec.objects.create(project=project, name="m", kind="python", source="a.b:c")
    run = EvaluationRun.objects.create(release=released, model=spec, split="test")
    analysis = Analysis.objects.create(project=project, kind="artifacts", params={})
    job = ImportJob.objects.create(project=project, kind="votes", status="failed")
    skipped = [{"line": 2, "message": "m", "text": "t"}]
    batch = ImportBatch.objects.create(
        project=project, source_name="f.csv", format="csv", skipped=skipped
    )
    # An import a release holds: its undo is refused (409) for those who may, and stays.
    held = ImportBatch.objects.create(project=project, source_name="held.csv", format="csv")
    Perturbation.objects.filter(release_entries__release=released).update(batch=held)
    item = perturbation.item
    slug, validator = project.slug, people["validator"]
    study = Study.objects.create(
        project=project, name="s", platform="prolific", token="t" * 32,
        items_per_participant=5, completion_code="DONE", ended_code="ENDED",
    )  # fmt: skip
    kwargs = {
        "api-pivot-claim": {"slug": slug, "external_id": perturbation.pivot.external_id},
        "api-perturbation": {"slug": slug, "pk": perturbation.pk},
        "api-vote": {"slug": slug, "item": item.pk},
        "api-adjudicate": {"slug": slug, "pk": perturbation.pk},
        "api-validator-qualify": {"slug": slug, "username": validator.username},
        "api-models": {},
        "api-model-check": {"pk": run.model_id},
        "model-check": {"slug": slug, "pk": run.model_id},
        "api-evaluations": {},
        "api-release": {"pk": released.pk},
        "api-release-download": {"pk": released.pk},
        "api-release-diff": {"pk": released.pk},
        "api-evaluation": {"pk": run.pk},
        "api-evaluation-predictions": {"pk": run.pk},
        "api-evaluations-compare": {},
        "api-evaluation-cancel": {"pk": run.pk},
        "api-evaluation-retry": {"pk": run.pk},
        "api-results": {},
        "api-results-score": {},
        "results": {},
        "results-score": {},
        "pivot-claim": {"slug": slug, "pk": perturbation.pivot_id},
        "pivot-answer": {"slug": slug, "pk": perturbation.pivot_id},
        "editor-new": {"slug": slug, "pk": perturbation.pivot_id},
        "editor-draft": {"slug": slug, "pk": perturbation.pk},
        "perturbation-withdraw": {"slug": slug, "pk": perturbation.pk},
        "validate-vote": {"slug": slug, "item": item.pk},
        "validate-skip": {"slug": slug, "item": item.pk},
        "validate-undo": {"slug": slug, "item": item.pk},
        "validator-qualify": {"slug": slug, "user_id": validator.pk},
        "adjudicate": {"slug": slug, "pk": perturbation.pk},
        "release-detail": {"slug": slug, "pk": released.pk},
        "run": {"slug": slug, "pk": run.pk},
        "run-progress": {"slug": slug, "pk": run.pk},
        "run-action": {"slug": slug, "pk": run.pk, "action": "cancel"},
        "api-import-job": {"slug": slug, "pk": job.pk},
        "api-batch": {"slug": slug, "pk": held.pk},
        "import-job": {"slug": slug, "pk": job.pk},
        "api-import-job-action": {"slug": slug, "pk": job.pk, "action": "cancel"},
        "import-job-action": {"slug": slug, "pk": job.pk, "action": "cancel"},
        "import-skipped": {"slug": slug, "pk": batch.pk},
        "import-warnings": {"slug": slug, "pk": batch.pk},
        "batch-undo": {"slug": slug, "pk": batch.pk},
        "api-item": {"slug": slug, "pk": perturbation.pk},
        "data-item": {"slug": slug, "kind": "perturbations", "pk": perturbation.pk},
        "api-analyses": {},
        "api-analysis": {"pk": analysis.pk},
        "api-analysis-cancel": {"pk": analysis.pk},
        "api-analysis-retry": {"pk": analysis.pk},
        "analysis": {"slug": slug, "pk": analysis.pk},
        "analysis-progress": {"slug": slug, "pk": analysis.pk},
        "analysis-action": {"slug": slug, "pk": analysis.pk, "action": "cancel"},
        "api-study-payments": {"slug": slug, "pk": study.pk},
        "study-payments": {"slug": slug, "pk": study.pk},
        # A webhook's removal: each call removes a webhook of its own, made for it.
        "api-webhook": lambda: {"slug": slug, "pk": webhook(project).pk},
        "webhook-delete": lambda: {"slug": slug, "pk": webhook(project).pk},
        "api-webhook-test": {"slug": slug, "pk": webhook(project).pk},
        "api-webhook-deliveries": {"slug": slug, "pk": webhook(project).pk},
        "webhook-test": {"slug": slug, "pk": webhook(project).pk},
        "api-comments": {"slug": slug, "pk": perturbation.pk},
        "comment-post": {"slug": slug, "pk": perturbation.pk},
        "comment-thread": {"slug": slug, "pk": perturbation.pk},
        # Each call edits or deletes a comment of its own, the expert's, made for it.
        "api-comment": lambda: comment_of(perturbation, people["expert"]),
        "comment-edit": lambda: comment_of(perturbation, people["expert"]),
        "comment-delete": lambda: comment_of(perturbation, people["expert"]),
    }
    users = {**people, "staff": staff}
    # The global endpoints learn the project from the payload: name this project's objects.
    payloads = {
        "api-models": {"project": slug},
        "api-evaluations": {"release": released.pk},
        "api-evaluations-compare": {"runs": f"{run.pk},{run.pk}"},  # the query string
        "api-analyses": {"kind": "artifacts", "release": released.pk},
        # the project named: an outsider who administers another one gets 404 for this one
        "api-results": {"projects": slug},
        "api-results-score": {"projects": slug},
        "results": {"projects": slug},
        "results-score": {"projects": slug},
    }
    return kwargs, users, slug, payloads


def comment_of(perturbation, author) -> dict:  # type: ignore[no-untyped-def,type-arg]
    from annotation.comments.services import comment_posted

    comment = comment_posted(perturbation=perturbation, author=author, body="a comment")
    return {"slug": perturbation.project.slug, "pk": perturbation.pk, "comment_id": comment.pk}


def webhook(project):  # type: ignore[no-untyped-def]
    return Webhook.objects.create(
        project=project, url="https://example.org/", events=["run.failed"]
    )


def test_every_role_gets_exactly_what_it_may(world):  # type: ignore[no-untyped-def]
    kwargs, users, slug, payloads = world
    failures = []
    for name, calls in MATRIX.items():
        for method, allowed in calls:
            for role in ROLES:
                found = kwargs.get(name, {"slug": slug})
                url = reverse(name, kwargs=found() if callable(found) else found)
                api = url.startswith("/api/")
                status = _call(api, method, url, users.get(role), payloads.get(name))
                expected = _expected(role, allowed, api)
                if not expected(status):
                    failures.append((name, method, role, status))
    assert failures == [], failures


def _call(api: bool, method: str, url: str, user: object, payload: dict | None) -> int:
    client: Client = APIClient() if api else Client()
    if user is not None:
        client.force_login(user)  # type: ignore[arg-type]
    if payload is None:
        return getattr(client, method)(url).status_code
    return getattr(client, method)(url, payload, format="json").status_code


def _expected(role: str, allowed: set[str], api: bool):  # type: ignore[no-untyped-def]
    if role == "anonymous":
        return (lambda s: s == 401) if api else (lambda s: s == 302)
    if role == "outsider":
        return lambda s: s == 404
    if role in allowed:
        return lambda s: s not in (401, 403, 404) and s < 500
    return lambda s: s in (403, 404)


def test_global_lists_show_only_what_the_user_administers(world, client_for):  # type: ignore[no-untyped-def]
    _, users, _, _ = world
    for role in ("outsider", "validator", "expert"):
        client = client_for(users[role])
        for url in ("/api/models/", "/api/evaluations/"):
            assert client.get(url).json()["results"] == [], (role, url)
    for role in ("admin", "staff"):
        assert len(client_for(users[role]).get("/api/models/").json()["results"]) == 1
    outsider = UserFactory(username="lonely")
    assert client_for(outsider).get("/api/projects/").json()["results"] == []
