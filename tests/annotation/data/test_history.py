"""A row's history tells the outcome that resolution stored: on a free-text project both read
it from annotation.validation.resolution.free_text_outcome (issue 61: the history worked it out
again)."""

import pytest

from annotation.authoring.services.drafts import perturbation_save
from annotation.data.history import perturbation_history
from annotation.projects.services import project_create
from annotation.text.answers import answer_text
from annotation.validation.services.votes import vote_cast
from tests.factories import ExampleFactory, UserFactory, member, serve

NONE = {"label": "unanswerable"}  # the extra label, not an answer
# Each item's five responses, and what the history then says; the author's answer is 1911.
CASES = [
    (["1911"] * 5, "majority 1911, so accepted"),
    (["Marie Curie"] * 3 + ["1911"] * 2, "majority Marie Curie, so disputed"),
    ([NONE] * 3 + ["1911"] * 2, "majority unanswerable, so no majority"),
    (["1903", "Marie", "Pierre", "1911", NONE], "no majority, so no majority"),
]


@pytest.mark.django_db
def test_a_free_text_rows_history_tells_the_outcome_its_resolution_stored():
    admin = UserFactory(username="boss", is_staff=True)
    project = project_create(
        user=admin, name="QA", slug="qa", task_type="free_text",
        fields=[{"name": "context", "editable": False}, {"name": "question"}],
        labels=[], extra_labels=["unanswerable"], tags=[{"name": "order"}],
        settings={"control_rate": 0, "max_edit_ratio": 1.0},
    )  # fmt: skip
    expert = member(project, "author", "expert")
    validators = [member(project, f"v{i}", "validator") for i in range(5)]
    for n, (responses, said) in enumerate(CASES):
        pivot = ExampleFactory(
            project=project, external_id=f"q{n}", label="", answers=["1903"],
            fields={"context": "Curie won in 1903 and 1911.", "question": f"When first? {n}"},
        )  # fmt: skip
        p = perturbation_save(
            author=expert, pivot=pivot, fields={"question": f"When again? {n}"},
            answers=["1911"], tags=["order"], submit=True,
        )  # fmt: skip
        for validator, response in zip(validators, responses, strict=True):
            serve(p.item, validator)
            said_as = response if isinstance(response, dict) else {"answer": response}
            vote_cast(project=project, item_id=p.item.pk, validator=validator, **said_as)
        p.refresh_from_db()
        p.item.refresh_from_db()
        resolved = [e for e in perturbation_history(p) if e.what == "resolved"]
        assert [e.detail for e in resolved] == [said]
        # The same outcome as the one stored: its answers or extra label, and the row's status.
        stored = " · ".join(answer_text(a) for a in p.item.majority_answers)
        stored = stored or p.item.majority_label
        majority = f"majority {stored}" if stored else "no majority"
        assert said == f"{majority}, so {p.status}".replace("_", " ")
