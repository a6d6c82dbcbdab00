"""Readers of the published contrast sets that come as CSV or TSV tables (docs/published/):
IMDb's paired TSVs, PERSPECTRUM's CSV, MC-TACO's two TSVs and MATRES's CSV. Each returns
(sets, notes, problems), as reading's docstring says."""

import re
from collections import defaultdict
from difflib import SequenceMatcher
from itertools import groupby

from annotation.errors import LineError
from annotation.imports.paired import ParsedSet
from annotation.imports.published.reading import (
    Files,
    Problems,
    Read,
    Rows,
    expect,
    perturbation,
    refuse,
    same_text,
    table,
)
from annotation.imports.services.originals import ParsedRow
from annotation.text.edits import normalize_whitespace


def imdb(files: Files) -> Read:
    """Paired TSV (Sentiment, Text): row i of <split>_contrast.tsv perturbs row i of
    <split>_original.tsv. Files come in pairs, originals first; the split is the name's prefix."""
    if not files or len(files) % 2:
        raise refuse(
            "IMDb comes in pairs of files: test_original.tsv, test_contrast.tsv "
            "(and dev_original.tsv, dev_contrast.tsv)."
        )
    problems, sets = Problems(), []
    for (original_name, original), (contrast_name, contrast) in zip(
        files[::2], files[1::2], strict=True
    ):
        split = "dev" if original_name.startswith("dev") else "test"
        columns = {"Sentiment", "Text"}
        originals = table(original_name, original, "\t", columns, problems)
        contrasts = table(contrast_name, contrast, "\t", columns, problems)
        if len(originals) != len(contrasts):
            problems.add(
                contrast_name,
                None,
                f"{len(contrasts)} rows for {len(originals)} "
                f"originals in {original_name}; row i pairs with row i.",
            )
            continue
        for n, ((line, o), (_, c)) in enumerate(zip(originals, contrasts, strict=True), 1):
            set_id = f"{split}-{n}"
            row = ParsedRow(line, set_id, {"text": o["Text"]}, o["Sentiment"], split)
            p = perturbation(
                f"{set_id}-contrast",
                {"text": c["Text"]},
                c["Sentiment"],
                f"{contrast_name} line {line}",
            )
            sets.append(ParsedSet(None, row, [p]))
    return sets, [], problems.errors


def perspectrum(files: Files) -> Read:
    """perspectrum_contrast_sets.csv: each row a claim, its contrast claim and one perspective,
    with both stances. Rows whose original stance is "unk" (the perspective is not relevant) are
    left out, and any other stance than "pos" reads as "neg", as run_evaluation.py does."""
    expect(files, 1, "perspectrum_contrast_sets.csv")
    name, data = files[0]
    columns = {
        "original_claim",
        "contrast_claim",
        "perspective",
        "original_stance_label",
        "contrast_stance_label",
    }
    problems, sets = Problems(), []
    unk: list[str | LineError] = []
    read_as_neg = 0

    def stance(value: str) -> str:
        nonlocal read_as_neg
        value = " ".join(value.split()).casefold()
        read_as_neg += value not in ("pos", "neg")
        return "pos" if value == "pos" else "neg"

    for line, row in table(name, data, ",", columns, problems):
        if row["original_stance_label"].strip() == "unk":
            unk.append(LineError(line, f"{name} line {line}: whose original stance is 'unk'"))
            continue
        set_id = f"perspectrum-{line}"
        fields = {"claim": row["original_claim"], "perspective": row["perspective"]}
        original = ParsedRow(line, set_id, fields, stance(row["original_stance_label"]), "test")
        edited = {**fields, "claim": row["contrast_claim"]}
        p = perturbation(
            f"{set_id}-contrast",
            edited,
            stance(row["contrast_stance_label"]),
            f"{name} line {line}",
        )
        sets.append(ParsedSet(None, original, [p]))
    notes = unk
    if read_as_neg:
        notes.append(
            f"{read_as_neg} stance(s) neither 'pos' nor 'neg': read as 'neg', as "
            "run_evaluation.py reads them."
        )
    return sets, notes, problems.errors


def mctaco(files: Files) -> Read:
    """original.tsv and changed.tsv (index, sentence1, sentence2, label): both files hold the
    same questions (sentence1, which holds the context too) in the same order, each with its
    candidate answers, but not always as many: the q-th question of changed.tsv perturbs the
    q-th of original.tsv, and its k-th candidate row pairs with the original's k-th. A
    candidate added past the original's last (6 in the published files) pairs with the
    original's candidate whose answer is the most alike (difflib), in the same question, so no
    row pairs across questions. Every row of original.tsv is kept: a candidate with no
    perturbation is a set of one (as NLVR2's). Each file's `index` is its rows' id."""
    expect(files, 2, "original.tsv, changed.tsv")
    columns = {"index", "sentence1", "sentence2", "label"}
    problems = Problems()
    (original_name, original), (changed_name, changed) = files
    originals = _questions(table(original_name, original, "\t", columns, problems))
    perturbed = _questions(table(changed_name, changed, "\t", columns, problems))
    if len(originals) != len(perturbed):
        problems.add(
            changed_name,
            None,
            f"{len(perturbed)} questions for {len(originals)} in "
            f"{original_name}; the q-th question of one pairs with the q-th of the "
            "other.",
        )
    problems.raise_any()
    notes, added = [], 0
    # Every original candidate is kept, in the file's order: a question's exact match needs
    # all of them (docs/published/mctaco.md); one with no perturbation is a set of one.
    by_pivot: dict[str, ParsedSet] = {}
    for o_line, o in (row for candidates in originals for row in candidates):
        fields = {"question": o["sentence1"], "answer": o["sentence2"]}
        pivot = ParsedRow(o_line, o["index"], fields, o["label"], "test")
        by_pivot.setdefault(o["index"], ParsedSet(None, pivot, []))
    for candidates, edits in zip(originals, perturbed, strict=True):
        for k, (line, row) in enumerate(edits):
            o = (candidates[k] if k < len(candidates) else _closest(candidates, row))[1]
            added += k >= len(candidates)
            edited = {"question": row["sentence1"], "answer": row["sentence2"]}
            where = f"{changed_name} line {line}"
            by_pivot[o["index"]].perturbations.append(
                perturbation(row["index"], edited, row["label"], where)
            )
    if added:
        notes.append(
            f"{added} candidate(s) of {changed_name} past their question's last "
            f"candidate in {original_name}: each joins the set of its question's "
            "candidate with the most alike answer."
        )
    alone = sum(not found.perturbations for found in by_pivot.values())
    if alone:
        notes.append(
            f"{alone} candidate(s) of {original_name} with no perturbation: each a set of "
            "one, so that a question's exact match counts every candidate."
        )
    return list(by_pivot.values()), notes, problems.errors


def _questions(rows: Rows) -> list[Rows]:
    """MC-TACO's rows grouped by question: runs of one sentence1 (whitespace aside)."""
    groups: list[Rows] = []
    for key, run in groupby(rows, key=lambda item: normalize_whitespace(item[1]["sentence1"])):
        del key
        groups.append(list(run))
    return groups


def _closest(candidates: Rows, row: dict[str, str]) -> tuple[int, dict[str, str]]:
    def likeness(candidate: tuple[int, dict[str, str]]) -> float:
        return SequenceMatcher(None, candidate[1]["sentence2"], row["sentence2"]).ratio()

    return max(candidates, key=likeness)


def reason_tags(reason: str) -> list[str] | None:
    """A published reason as tags: "appearance order, indicator + tense" names three
    phenomena; no reason gives the dataset's default tag."""
    tags = [" ".join(t.split()) for t in re.split(r"[,+]", reason)]
    return list(dict.fromkeys(t for t in tags if t)) or None


def matres(files: Files) -> Read:
    """Platinum_subset_minimal_pairs.csv (_unit_id, bodygraph, docid, decision, modified
    bodygraph, new decision, reason): rows of one _unit_id are one set (their bodygraphs may
    differ in whitespace alone); the events are marked in the HTML of the bodygraph; each
    phenomenon the reason names is a tag. Rows with no modified bodygraph or no new decision
    (23 in the published file) are left out with a note."""
    expect(files, 1, "Platinum_subset_minimal_pairs.csv")
    name, data = files[0]
    columns = {"_unit_id", "bodygraph", "decision", "modified bodygraph", "new decision", "reason"}
    problems = Problems()
    groups: dict[str, Rows] = defaultdict(list)
    notes: list[str | LineError] = []
    for line, row in table(name, data, ",", columns, problems):
        if not row["modified bodygraph"].strip() or not row["new decision"].strip():
            why = "with no modified bodygraph or new decision"
            notes.append(LineError(line, f"{name} line {line}: {why}"))
        else:
            groups[row["_unit_id"]].append((line, row))
    sets = []
    for unit, rows in groups.items():
        line, first = rows[0]
        pivot = ParsedRow(line, unit, {"text": first["bodygraph"]}, first["decision"], "test")
        items = []
        for n, (row_line, row) in enumerate(rows, 1):
            if not same_text(row["bodygraph"], first["bodygraph"]):
                problems.add(
                    name,
                    row_line,
                    f"_unit_id {unit} has another bodygraph on line "
                    f"{line}; one set has one original.",
                )
            where = f"{name} line {row_line}"
            edited = {"text": row["modified bodygraph"]}
            tags = reason_tags(row["reason"])
            items.append(perturbation(f"{unit}-{n}", edited, row["new decision"], where, tags))
        sets.append(ParsedSet(None, pivot, items))
    return sets, notes, problems.errors
