"""Readers of the published question-answering contrast sets shaped as SQuAD's JSON
(docs/published/): Quoref and ROPES. Each returns (sets, notes, problems), as reading's
docstring says, paired as the dataset's own script pairs them."""

from collections import Counter, defaultdict
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
from annotation.imports.set_checks import Warned, line_in


def _squad_questions(name: str, data: bytes) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(where, paragraph, qa) of a SQuAD-shaped file: {"data": [{"paragraphs": [{..., "qas"}]}]};
    a part of another shape refuses the file with where it is."""
    document = read_json(name, data)
    articles = document.get("data") if isinstance(document, dict) else None
    if not isinstance(articles, list):
        raise refuse(f'{name}: expected {{"data": [...]}}.')
    problems: list[str] = []
    out = []
    for a, article in objects(articles, "data", problems):
        for p, paragraph in objects(article.get("paragraphs"), f"data[{a}].paragraphs", problems):
            where = f"data[{a}].paragraphs[{p}]"
            for q, qa in objects(paragraph.get("qas"), f"{where}.qas", problems):
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


def _context_fields(paragraph: dict[str, Any], qa: dict[str, Any]) -> dict[str, str]:
    """A Quoref question's fields: its paragraph's context and the question."""
    return {"context": text_of(paragraph.get("context")), "question": text_of(qa.get("question"))}


def quoref(files: Files) -> Read:
    """quoref_original_subset_….json then quoref_test_perturbations_….json, SQuAD-shaped: a
    perturbation names its original by original_id (compute_metrics.py's sets); each question's
    answer spans together are one answer; the context may be edited too."""
    expect(files, 2, "the original subset, then the perturbations")
    (original_name, original), (perturbed_name, perturbed) = files
    originals = {}
    for _, paragraph, qa in _squad_questions(original_name, original):
        originals[text_of(qa.get("id"))] = ParsedRow(
            None,
            text_of(qa.get("id")),
            _context_fields(paragraph, qa),
            "",
            "test",
            answers=_spans(qa),
        )
    questions = list(_squad_questions(perturbed_name, perturbed))
    _refuse_swapped(questions, original, original_name, perturbed_name)
    problems = Problems()
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    renamed: list[Warned] = []
    at = _Places(perturbed_name, perturbed)
    for where, paragraph, qa in questions:
        if "original_id" not in qa:
            problems.add(
                perturbed_name,
                None,
                f"{where} ({qa.get('id')}) has no original_id: "
                "the perturbations' file comes second.",
            )
            continue
        original_id = text_of(qa["original_id"])
        if original_id not in originals:
            problems.add(
                perturbed_name,
                None,
                f"{where} ({qa.get('id')}): original_id {original_id!r} is not in {original_name}.",
            )
            continue
        # The file lists 2 questions twice, each under two originals: both are kept, the
        # second as <id>-2, since a run scores each example under an id of its own.
        given = text_of(qa.get("id"))
        place, copy = at.next(given, where)
        item_id = given if copy == 1 else f"{given}-{copy}"
        if copy > 1:
            renamed.append(_renamed(place, given, item_id, original_id))
        groups[original_id].append(
            perturbation(item_id, _context_fields(paragraph, qa), _spans(qa), place)
        )
    return (
        [ParsedSet(None, originals[i], items) for i, items in groups.items()],
        _renamed_note(perturbed_name, renamed) + renamed,
        problems.errors,
    )


class _Places:
    """Where each question of a SQuAD-shaped file is: "file line N" where the file is laid out
    over lines (its `"id"` line), else "file data[0].paragraphs[0].qas[0]"; and which copy of
    its id it is (1, then 2 for an id the file repeats)."""

    def __init__(self, name: str, data: bytes) -> None:
        self.name, self.lines, self.seen = name, id_lines(data), Counter[str]()

    def next(self, given: str, where: str) -> tuple[str, int]:
        self.seen[given] += 1
        copy = self.seen[given]
        lines = self.lines.get(given, [])
        at = f"line {lines[copy - 1]}" if len(lines) >= copy else where
        return f"{self.name} {at}", copy


RENAMED = "its id names another question of the file too: kept as <id>-2"


def _renamed(place: str, given: str, item_id: str, original_id: str) -> Warned:
    message = (
        f"{place}: id {given} names a second question (of original {original_id}), "
        f"kept as {item_id}."
    )
    return Warned(line_in({"where": place}, None), message, RENAMED, place, item_id)


def _renamed_note(name: str, renamed: list[Warned]) -> list[str | LineError]:
    """The message the page shows once, beside the warnings that say it for each copy."""
    if not renamed:
        return []
    ids = ", ".join(dict.fromkeys(w.id.rsplit("-", 1)[0] for w in renamed))
    return [
        f"{len(renamed)} question(s) of {name} repeat an id ({ids}): each repeat is kept, "
        "as <id>-2 and so on (see the warnings)."
    ]


def _refuse_swapped(
    questions: list[Any], original: bytes, original_name: str, perturbed_name: str
) -> None:
    """Not one question of the second file names its original_id: one line that says why
    (the files swapped, or not the perturbations' file), not a line per question."""
    if not questions or any("original_id" in qa for _, _, qa in questions):
        return
    if any("original_id" in qa for _, _, qa in _squad_questions(original_name, original)):
        raise refuse(
            f"the files look swapped: {original_name}'s questions name an original_id and "
            f"{perturbed_name}'s do not. Give the original subset first, then the perturbations."
        )
    raise refuse(
        f"not one of the {len(questions)} questions of {perturbed_name} has an original_id: "
        "is it the perturbations' file? It comes second, after the original subset."
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
        raise refuse(
            f"{contrast_name}: {len(contrasts)} questions for {len(originals)} in "
            f"{original_name}; the i-th question of one pairs with the i-th of the other."
        )

    def fields(paragraph: dict[str, Any], qa: dict[str, Any]) -> dict[str, str]:
        return {
            "background": text_of(paragraph.get("background")),
            "situation": text_of(paragraph.get("situation")),
            "question": text_of(qa.get("question")),
        }

    sets = []
    at = _Places(contrast_name, contrast)
    for (_, op, oq), (where, cp, cq) in zip(originals, contrasts, strict=True):
        pivot = ParsedRow(
            None, text_of(oq.get("id")), fields(op, oq), "", "test", answers=_alternatives(oq)
        )
        place, _ = at.next(text_of(cq.get("id")), where)
        p = perturbation(text_of(cq.get("id")), fields(cp, cq), _alternatives(cq), place)
        sets.append(ParsedSet(None, pivot, [p]))
    return sets, [], []
