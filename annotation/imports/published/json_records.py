"""Readers of the published contrast sets whose records are JSON (docs/published/): BoolQ's one
JSON document and NLVR2's JSON Lines, both classification. Each returns (sets, notes,
problems), as reading's docstring says."""

from collections import defaultdict
from typing import Any

from annotation.errors import LineError
from annotation.imports.paired import ParsedSet
from annotation.imports.published.reading import (
    Files,
    Problems,
    Read,
    expect,
    perturbation,
    read_json,
    refuse,
    text_of,
)
from annotation.imports.readers import decode, read_jsonl
from annotation.imports.services.originals import ParsedRow


def boolq(files: Files) -> Read:
    """boolq_perturbed.json: {"data": [{title, paragraph, question, answer, perturbed_questions:
    [{perturbed_q, answer}]}]}. The first entry, a template ("Gold Answer"), and perturbations
    left empty are not sets; ids are the entry's and the perturbation's positions."""
    expect(files, 1, "boolq_perturbed.json")
    name, data = files[0]
    document = read_json(name, data)
    entries = document.get("data") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise refuse(f'{name}: expected {{"data": [...]}}.')
    problems, sets = Problems(), []
    notes: list[str | LineError] = []
    for n, entry in enumerate(entries):
        where = f"data[{n}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("perturbed_questions"), list):
            problems.add(name, None, f"{where}: expected an object with perturbed_questions.")
            continue
        if text_of(entry.get("answer")).strip().lower() not in ("true", "false"):
            said = f"{where}: not a question, its answer neither true nor false"
            notes.append(LineError(None, said))
            continue
        fields = {k: text_of(entry.get(k)) for k in ("title", "paragraph", "question")}
        row = ParsedRow(None, f"boolq-{n}", fields, text_of(entry["answer"]), "test")
        items = []
        for j, q in enumerate(entry["perturbed_questions"]):
            if not isinstance(q, dict):
                problems.add(name, None, f"{where}.perturbed_questions[{j}]: expected an object.")
            elif not text_of(q.get("perturbed_q")).strip():
                said = f"{where}.perturbed_questions[{j}]: a perturbation left empty in the file"
                notes.append(LineError(None, said))
            else:
                edited = {**fields, "question": text_of(q["perturbed_q"])}
                items.append(
                    perturbation(
                        f"boolq-{n}-{j}",
                        edited,
                        text_of(q.get("answer")),
                        f"{where}.perturbed_questions[{j}]",
                    )
                )
        if items:
            sets.append(ParsedSet(None, row, items))
    return sets, notes, problems.errors


def nlvr2(files: Files) -> Read:
    """contrast_set_nlvr2.jsonl (sentence, left_url, right_url, identifier, label): examples whose
    identifiers differ only in the last two characters are one set (eval.py's groups); the
    group's first line is the original. A group of one line (21 in the published file) is a
    set of one, an original alone, which eval.py counts as consistent when it is right."""
    expect(files, 1, "contrast_set_nlvr2.jsonl")
    name, data = files[0]
    problems = Problems()
    groups: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for line, record in read_jsonl(decode(data)):
        if isinstance(record, LineError):
            problems.add(name, record.line, record.message)
            continue
        missing = {"sentence", "left_url", "right_url", "identifier", "label"} - set(record)
        if missing:
            problems.add(name, line, f"missing {', '.join(sorted(missing))}.")
            continue
        groups[text_of(record["identifier"])[:-2]].append((line, record))
    sets, alone = [], 0
    for members in groups.values():
        (line, first), rest = members[0], members[1:]
        pivot = ParsedRow(
            line,
            text_of(first["identifier"]),
            _image_fields(first),
            text_of(first["label"]),
            "test",
        )
        items = [
            perturbation(
                text_of(r["identifier"]), _image_fields(r), text_of(r["label"]), f"{name} line {n}"
            )
            for n, r in rest
        ]
        alone += not items
        sets.append(ParsedSet(None, pivot, items))
    notes = (
        [f"{alone} group(s) of one line: each a set of one, as eval.py counts it."] if alone else []
    )
    return sets, notes, problems.errors


def _image_fields(record: dict[str, Any]) -> dict[str, str]:
    """An NLVR2 line's fields: its sentence and its two images' addresses."""
    return {k: text_of(record[k]) for k in ("sentence", "left_url", "right_url")}
