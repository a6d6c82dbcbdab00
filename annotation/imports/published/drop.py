"""The reader of DROP's published contrast set (docs/published/drop.md), DROP-shaped JSON:
{passage id: {passage, qa_pairs}}. It returns (sets, notes, problems), as reading's docstring
says, paired as DROP's consistency.py pairs them."""

from collections import defaultdict
from typing import Any

from annotation.errors import ImportRejected, LineError
from annotation.imports.paired import ParsedSet
from annotation.imports.published.reading import (
    Files,
    Problems,
    Read,
    expect,
    id_lines,
    objects,
    perturbation,
    read_json,
    refuse,
    text_of,
)
from annotation.imports.services.originals import ParsedRow


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
        raise refuse(f"{name}: expected {{passage id: {{passage, qa_pairs}}}}.")
    problems: list[str] = []
    out = []
    for passage_id, entry in document.items():
        if not isinstance(entry, dict):
            problems.append(f"{passage_id}: expected an object with passage and qa_pairs.")
            continue
        for _, qa in objects(entry.get("qa_pairs"), f"{passage_id}.qa_pairs", problems):
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
    lines = id_lines(contrast, "query_id")  # where the file is laid out over lines
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
            problems.add(
                contrast_name,
                None,
                f"{passage_id} {query_id}: its original {original_id!r} {named}.",
            )
            continue
        fields = {"passage": passage, "question": text_of(qa.get("question"))}
        at = lines.get(query_id)
        where = f"{contrast_name} " + (f"line {at[0]}" if at else f"{passage_id} {query_id}")
        groups[original_id].append(perturbation(query_id, fields, _drop_answers(qa), where))
    sets = [ParsedSet(None, originals[i], items) for i, items in groups.items()]
    notes = (
        []
        if given
        else [
            f"{len(sets)} original(s) built from the file's original_question, with no answer yet: "
            "write each in the editor (Pivots); a release leaves out the sets still waiting."
        ]
    )
    return sets, notes, problems.errors
