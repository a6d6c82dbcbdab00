"""One project's answer rules, the same in every workflow: ROPES's published answer "A" is
taken from a validator, matched, imported through sets.jsonl and scored, under ROPES's rules;
under SQuAD's it normalises to nothing and each workflow says so. The rules are restated here
from the datasets' scripts: SQuAD drops the articles a/an/the, ROPES keeps them."""

import json
import re
import string

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.imports.published.services import import_published
from annotation.models import Perturbation, ValidationItem
from annotation.projects.services import project_create
from annotation.text.answers import AnswerRules, Response
from annotation.validation.services.queue import next_item
from annotation.validation.services.votes import vote_cast
from evaluation.runs.scoring import scored_answers
from tests.annotation.imports.test_published_real import GARDNER, TABLE_2, files_of
from tests.factories import UserFactory, member

pytestmark = pytest.mark.django_db
ROPES, SQUAD = AnswerRules("ropes", "em"), AnswerRules("squad")


def normalise(text: str, articles: bool) -> str:
    """The two scripts' normalisation, written from their definitions."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    if articles:
        text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


@pytest.mark.parametrize("answer", ["A", "the", "B", "Group A", "an"])
def test_each_rule_normalises_as_its_script(answer):
    assert ROPES.normalize(answer) == normalise(answer, articles=False)
    assert SQUAD.normalize(answer) == normalise(answer, articles=True)


def test_a_response_matches_under_the_projects_rules_only():
    assert SQUAD.matches(Response("the"), ["A"], "")  # both normalise to nothing
    assert not ROPES.matches(Response("the"), ["A"], "")
    assert ROPES.matches(Response("a"), ["A"], "") and not ROPES.matches(Response("B"), ["A"], "")


@pytest.fixture
def root(db, settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "media"
    return UserFactory(username="root", is_staff=True, is_superuser=True)


def test_a_ropes_validator_answering_a_is_taken_matched_and_scored(root):
    result = import_published(
        dataset="ropes", files=files_of(GARDNER, TABLE_2["ropes"][0]), user=root, accept=False
    )
    project = result.project
    voters = [member(project, f"v{n}", "validator") for n in range(5)]
    target = Perturbation.objects.filter(project=project, answers=["A"]).first()
    assert target is not None
    item = ValidationItem.objects.get(perturbation=target)
    for voter in voters:
        served = next_item(project=project, validator=voter)
        assert served is not None
        cast = vote_cast(project=project, item_id=item.pk, validator=voter, answer="A")
        assert cast.created and cast.answer == "A"
    target.refresh_from_db()
    assert target.status == "accepted"  # five "A"s match the published "A"
    example = {"id": target.external_id, "set_id": "s", "role": "perturbed", "answers": ["A"],
               "tags": []}  # fmt: skip
    rows, metrics = scored_answers(project, [example, {**example, "role": "original"}], ["A", "B"])
    assert [r["em"] for r in rows] == [1.0, 0.0] and metrics["consistency"] == 0.0
    assert metrics["answer_rules"] == {"normalization": "ropes", "consistency": "em"}


def _ropes_sets_jsonl(limit: int) -> bytes:
    """ROPES's files as sets.jsonl, the i-th question of one with the i-th of the other."""

    def questions(name: str) -> list[tuple[dict, dict]]:
        data = json.loads((GARDNER / name).read_text())["data"]
        return [(p, q) for a in data for p in a["paragraphs"] for q in p["qas"]]

    originals, contrasts = (questions(n) for n in TABLE_2["ropes"][0])
    lines = []
    for n, ((op, oq), (cp, cq)) in enumerate(zip(originals, contrasts, strict=True)):

        def fields(p: dict, q: dict) -> dict:
            return {"background": p["background"], "situation": p["situation"],
                    "question": q["question"]}  # fmt: skip

        lines.append({
            "set_id": f"ropes-{n}",
            "original": {"id": f"ropes-{n}", "fields": fields(op, oq),
                         "answers": [a["text"] for a in oq["answers"]]},
            "perturbations": [{"fields": fields(cp, cq),
                               "answers": [a["text"] for a in cq["answers"]], "tags": ["edit"]}],
        })  # fmt: skip
    return "\n".join(json.dumps(line) for line in lines[:limit]).encode()


@pytest.mark.parametrize("normalization", ["ropes", "squad"])
def test_a_ropes_sets_jsonl_imports_whole_and_warns_only_under_squad(
    normalization, root, client_for
):
    project = project_create(
        user=root, slug="r", name="ROPES", task_type="free_text",
        fields=[{"name": n, "editable": n != "background"}
                for n in ("background", "situation", "question")],
        labels=[], tags=[{"name": "edit"}],
        settings={"answer_normalization": normalization, "answer_consistency": "em"},
    )  # fmt: skip
    content = _ropes_sets_jsonl(600)  # lines 580-581 hold the answers "A" and "B"
    answer = client_for(root).post(
        "/api/projects/r/import/sets/",
        {"format": "sets_jsonl", "file": SimpleUploadedFile("ropes.jsonl", content)},
        format="multipart",
    )
    assert answer.status_code == 201, answer.json()
    assert Perturbation.objects.filter(project=project).count() == 600
    erased = [w for w in answer.json()["warnings"] if "normalise to nothing" in w["message"]]
    assert bool(erased) == (normalization == "squad")
