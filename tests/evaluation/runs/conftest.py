"""Fixtures of runs' tests: a free-text release scored by several kinds of runs."""

import pytest

from annotation.models import Perturbation
from tests.factories import ExampleFactory, UserFactory, member, submitted_perturbation

QA = [  # context, question, answers; the edited context and its answers
    ("Alice is in Paris.", "Where is Alice?", ["Paris"], "Alice is in London.", ["London"]),
    ("Bob is in London.", "Who is in London?", ["Bob"], "Alice is in London.", ["Alice"]),
    ("The film was good.", "What was good?", ["the film"], "The plot was good.", ["plot"]),
]


def _api(client_for):  # type: ignore[no-untyped-def]
    staff = UserFactory(username="root", is_staff=True)
    return client_for(staff)


@pytest.fixture
def questions(db, client_for, settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"
    root = _api(client_for)
    created = root.post("/api/projects/", {
        "name": "QA", "slug": "qa", "task_type": "free_text",
        "fields": [{"name": "context", "editable": True}, {"name": "question", "editable": False}],
        "labels": [], "tags": [{"name": "entity"}],
        "settings": {"prompt": "Context: {context}\nQuestion: {question}\nAnswer:"},
    }, format="json")  # fmt: skip
    assert created.status_code == 201, created.json()
    from annotation.authoring.services.drafts import perturbation_save
    from annotation.models import Project

    project = Project.objects.get(slug="qa")
    author = member(project, "ana", "expert")
    for n, (context, question, answers, edited, new_answers) in enumerate(QA):
        pivot = ExampleFactory(project=project, external_id=f"q{n}", label="", answers=answers,
                               fields={"context": context, "question": question})  # fmt: skip
        p = perturbation_save(author=author, pivot=pivot, fields={"context": edited},
                              answers=new_answers, tags=["entity"], submit=True)  # fmt: skip
        Perturbation.objects.filter(pk=p.pk).update(status="accepted")
    release = root.post("/api/projects/qa/releases/", {"version": "1"}, format="json")
    assert release.status_code == 201, release.json()
    return project, release.json()["id"], root


PROMPT = "Review: {text}\nSentiment:"
REVIEWS = ["the film was good", "the acting was great", "a good plot", "good acting, not awful",
           "the plot was good and the acting great", "the film was great"]  # fmt: skip


@pytest.fixture
def sentiment(db, client_for, settings, tmp_path):  # type: ignore[no-untyped-def]
    """A classification project with a prompt and a verbalizer, released with test and train."""
    settings.MEDIA_ROOT = tmp_path / "media"
    root = _api(client_for)
    created = root.post("/api/projects/", {
        "name": "Reviews", "slug": "reviews", "fields": [{"name": "text", "editable": True}],
        "labels": ["negative", "positive"], "tags": [{"name": "negation"}],
        "settings": {"prompt": PROMPT, "verbalizers": {"positive": "great"}},
    }, format="json")  # fmt: skip
    assert created.status_code == 201, created.json()
    from annotation.models import Project

    project = Project.objects.get(slug="reviews")
    author = member(project, "ana", "expert")
    for n, text in enumerate(REVIEWS):
        split = "train" if n >= 4 else "test"
        pivot = ExampleFactory(project=project, external_id=f"r{n}", label="positive",
                               fields={"text": text}, split=split)  # fmt: skip
        for word in ("bad", "awful")[: 1 + n % 2]:
            edited = text.replace("good", word).replace("great", word)
            p = submitted_perturbation(project, author, pivot=pivot, text=edited)
            Perturbation.objects.filter(pk=p.pk).update(status="accepted")
    release = root.post(f"/api/projects/{project.slug}/releases/", {"version": "1"}, format="json")
    assert release.status_code == 201, release.json()
    return project, release.json()["id"], root
