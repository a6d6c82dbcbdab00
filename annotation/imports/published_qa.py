"""Readers of the question-answering contrast sets published with Gardner et al. (2020):
Quoref, ROPES and DROP, SQuAD-shaped or DROP-shaped JSON documents (docs/published/). As in
published_formats, each returns (sets, notes) paired as the dataset's own script pairs them."""

from collections import defaultdict
from typing import Any

from annotation.errors import ImportRejected
from annotation.imports.originals import ParsedRow
from annotation.imports.paired import ParsedSet
from annotation.imports.published_formats import (
    Files,
    Problems,
    Read,
    expect,
    perturbation,
    read_json,
    text_of,
)
from annotation.imports.readers import LineError


def _objects(value: Any, where: str, problems: list[str]) -> list[tuple[int, dict[str, Any]]]:
    """The objects of a list, each with its position; anything else is a problem."""
    if value is None:
        return []
    if not isinstance(value, list):
        problems.append(f"{where}: expected a list.")
        return []
    out = []
    for n, item in enumerate(value):
        if isinstance(item, dict):
            out.append((n, item))
        else:
            problems.append(f"{where}[{n}]: expected an object.")
    return out


def _squad_questions(name: str, data: bytes) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(where, paragraph, qa) of a SQuAD-shaped file: {"data": [{"paragraphs": [{..., "qas"}]}]};
    a part of another shape refuses the file with where it is."""
    document = read_json(name, data)
    articles = document.get("data") if isinstance(document, dict) else None
    if not isinstance(articles, list):
        raise ImportRejected([LineError(None, f'{name}: expected {{"data": [...]}}.')])
    problems: list[str] = []
    out = []
    for a, article in _objects(articles, "data", problems):
        for p, paragraph in _objects(article.get("paragraphs"), f"data[{a}].paragraphs", problems):
            where = f"data[{a}].paragraphs[{p}]"
            for q, qa in _objects(paragraph.get("qas"), f"{where}.qas", problems):
                out.append((f"{where}.qas[{q}]", paragraph, qa))
    if problems:
        raise ImportRejected([LineError(None, f"{name}: {problem}") for problem in problems])
    return out


def _spans(qa: Any) -> list[Any]:
    """Quoref's answers: every span of one answer; several make one multi-span answer."""
    answers = qa.get("answers") if isinstance(qa.get("answers"), list) else []
    texts = [text_of(a.get("text")) for a in answers if isinstance(a, dict)]
    return [texts if len(texts) > 1 else texts[0]] if texts else []


def _alternatives(qa: Any) -> list[Any]:
    """SQuAD-shaped answers, each an alternative (ROPES)."""
    answers = qa.get("answers") if isinstance(qa.get("answers"), list) else []
    return [text_of(a.get("text")) for a in answers if isinstance(a, dict)]


def quoref(files: Files) -> Read:
    """quoref_original_subset_….json then quoref_test_perturbations_….json, SQuAD-shaped: a
    perturbation names its original by original_id (compute_metrics.py's sets); each question's
    answer spans together are one answer; the context may be edited too."""
    expect(files, 2, "the original subset, then the perturbations")
    (original_name, original), (perturbed_name, perturbed) = files
    originals = {}
    for _, paragraph, qa in _squad_questions(original_name, original):
        fields = {
            "context": text_of(paragraph.get("context")),
            "question": text_of(qa.get("question")),
        }
        originals[text_of(qa.get("id"))] = ParsedRow(
            None, text_of(qa.get("id")), fields, "", "test", answers=_spans(qa)
        )
    problems = Problems()
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for where, paragraph, qa in _squad_questions(perturbed_name, perturbed):
        if "original_id" not in qa:
            problems.add(perturbed_name, None, f"{where} ({qa.get('id')}) has no original_id: "
                         "the perturbations' file comes second.")  # fmt: skip
            continue
        original_id = text_of(qa["original_id"])
        if original_id not in originals:
            problems.add(
                perturbed_name,
                None,
                f"{where} ({qa.get('id')}): original_id {original_id!r} is not in {original_name}.",
            )
            continue
        fields = {
            "context": text_of(paragraph.get("context")),
            "question": text_of(qa.get("question")),
        }
        groups[original_id].append(
            perturbation(text_of(qa.get("id")), fields, _spans(qa), f"{perturbed_name} {where}")
        )
    return (
        [ParsedSet(None, originals[i], items) for i, items in groups.items()],
        [],
        problems.errors,
    )


def ropes(files: Files) -> Read:
    """ropes_contrast_set_original_….json then ropes_contrast_set_….json, SQuAD-shaped with
    background and situation: the i-th question of one file pairs with the i-th of the other
    (evaluate_contrast_set.py), and the two often share an id."""
    expect(files, 2, "the originals, then the contrast set")
    (original_name, original), (contrast_name, contrast) = files
    originals = list(_squad_questions(original_name, original))
    contrasts = list(_squad_questions(contrast_name, contrast))
    if len(originals) != len(contrasts):
        raise ImportRejected(
            [
                LineError(
                    None,
                    f"{contrast_name}: {len(contrasts)} questions for "
                    f"{len(originals)} in {original_name}; the i-th question "
                    "of one pairs with the i-th of the other.",
                )
            ]
        )

    def fields(paragraph: dict[str, Any], qa: dict[str, Any]) -> dict[str, str]:
        return {
            "background": text_of(paragraph.get("background")),
            "situation": text_of(paragraph.get("situation")),
            "question": text_of(qa.get("question")),
        }

    sets = []
    for (_, op, oq), (where, cp, cq) in zip(originals, contrasts, strict=True):
        pivot = ParsedRow(
            None, text_of(oq.get("id")), fields(op, oq), "", "test", answers=_alternatives(oq)
        )
        p = perturbation(
            text_of(cq.get("id")), fields(cp, cq), _alternatives(cq), f"{contrast_name} {where}"
        )
        sets.append(ParsedSet(None, pivot, [p]))
    return sets, [], []


def _drop_answer(answer: Any) -> Any:
    """A DROP answer as text or spans: its number, else its spans, else its date's parts."""
    if not isinstance(answer, dict):
        return None
    if text_of(answer.get("number")).strip():
        return text_of(answer["number"]).strip()
    given = answer.get("spans")
    spans = [text_of(s) for s in given if text_of(s).strip()] if isinstance(given, list) else []
    if spans:
        return spans if len(spans) > 1 else spans[0]
    date = answer.get("date")
    if not isinstance(date, dict):
        return None
    parts = [text_of(date.get(k)).strip() for k in ("day", "month", "year")]
    return " ".join(p for p in parts if p) or None


def _drop_answers(qa: dict[str, Any]) -> list[Any]:
    validated = qa.get("validated_answers")
    found = [_drop_answer(qa.get("answer"))]
    found += [_drop_answer(a) for a in validated] if isinstance(validated, list) else []
    out: list[Any] = []
    for a in found:
        if a is not None and a not in out:
            out.append(a)
    return out


def _drop_questions(name: str, data: bytes) -> list[tuple[str, str, dict[str, Any]]]:
    """(passage id, passage, qa) of a DROP-shaped file: {passage id: {passage, qa_pairs}}."""
    document = read_json(name, data)
    if not isinstance(document, dict):
        raise ImportRejected(
            [LineError(None, f"{name}: expected {{passage id: {{passage, qa_pairs}}}}.")]
        )
    problems: list[str] = []
    out = []
    for passage_id, entry in document.items():
        if not isinstance(entry, dict):
            problems.append(f"{passage_id}: expected an object with passage and qa_pairs.")
            continue
        for _, qa in _objects(entry.get("qa_pairs"), f"{passage_id}.qa_pairs", problems):
            out.append((passage_id, text_of(entry.get("passage")), qa))
    if problems:
        raise ImportRejected([LineError(None, f"{name}: {problem}") for problem in problems])
    return out


def drop(files: Files) -> Read:
    """drop_contrast_sets_test.json alone, or after DROP's own test set (drop_dataset_test.json):
    a perturbation's query_id is its original's with _N appended (consistency.py). Without the
    test set, each original is built from its perturbations' `original_question` and passage,
    with no answer: the project's experts write it in the editor, and a release leaves out the
    sets still waiting for one (and names them). Answers are numbers, spans or dates, with
    validated alternatives."""
    if len(files) not in (1, 2):
        expect(files, 2, "drop_contrast_sets_test.json, or DROP's test set then it")
    (contrast_name, contrast), given = files[-1], files[:-1]
    originals: dict[str, ParsedRow] = {}
    for _, passage, qa in _drop_questions(given[0][0], given[0][1]) if given else []:
        fields = {"passage": passage, "question": text_of(qa.get("question"))}
        query_id = text_of(qa.get("query_id"))
        originals[query_id] = ParsedRow(
            None, query_id, fields, "", "test", answers=_drop_answers(qa)
        )
    problems = Problems()
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for passage_id, passage, qa in _drop_questions(contrast_name, contrast):
        query_id = text_of(qa.get("query_id"))
        original_id = query_id.split("_")[0]  # as consistency.py reads it
        question = text_of(qa.get("original_question"))
        if not given and original_id not in originals and question.strip():
            fields = {"passage": passage, "question": question}
            waiting = {"answer_waiting": True}
            originals[original_id] = ParsedRow(None, original_id, fields, "", "test", waiting)
        if original_id not in originals:
            named = f"is not in {given[0][0]}" if given else "has no original_question"
            problems.add(contrast_name, None, f"{passage_id} {query_id}: its original "
                         f"{original_id!r} {named}.")  # fmt: skip
            continue
        fields = {"passage": passage, "question": text_of(qa.get("question"))}
        where = f"{contrast_name} {passage_id} {query_id}"
        groups[original_id].append(perturbation(query_id, fields, _drop_answers(qa), where))
    sets = [ParsedSet(None, originals[i], items) for i, items in groups.items()]
    notes = [] if given else [
        f"{len(sets)} original(s) built from the file's original_question, with no answer yet: "
        "write each in the editor (Pivots); a release leaves out the sets still waiting."
    ]  # fmt: skip
    return sets, notes, problems.errors
