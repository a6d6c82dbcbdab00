"""Small files in the format of each contrast set published with Gardner et al. (2020), written
for the tests (the real data stays outside this repository). Each builder returns the files in
the dataset's order and what the import must make of them: the sets (original id -> published
ids of its perturbations), in the dataset's own pairing."""

import csv
import io
import json
from typing import Any

Built = tuple[list[tuple[str, bytes]], dict[str, list[str]]]


def _tsv(header: list[str], rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerows([header, *rows])
    return out.getvalue().encode()


def _csv(header: list[str], rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *rows])
    return out.getvalue().encode()


def _json(value: Any) -> bytes:
    return json.dumps(value, indent=2).encode()


def imdb() -> Built:
    header = ["Sentiment", "Text"]
    original = _tsv(header, [["Positive", 'A warm, "funny" film.<br /><br />Loved it.'],
                             ["Negative", "Dull and far too long."]])  # fmt: skip
    contrast = _tsv(header, [["Negative", 'A cold, "unfunny" film.<br /><br />Hated it.'],
                             ["Positive", "Tight and never too long."]])  # fmt: skip
    files = [("test_original.tsv", original), ("test_contrast.tsv", contrast)]
    return files, {"test-1": ["test-1-contrast"], "test-2": ["test-2-contrast"]}


def boolq() -> Built:
    """The template entry first, as published; a repeated perturbation and an empty one."""
    data = [
        {"title": "Title", "paragraph": "Paragraph", "question": "Question",
         "answer": "Gold Answer", "perturbed_questions": [{"perturbed_q": "Perturbed Q",
                                                           "answer": "New Answer"}]},
        {"title": "Post-office box", "paragraph": "A P.O. box has a street address.",
         "question": "does a p o box have a street address", "answer": "TRUE",
         "perturbed_questions": [
             {"perturbed_q": "does a P.O. box lack a street address", "answer": "FALSE"},
             {"perturbed_q": "does a P.O. box contain the street address", "answer": "TRUE"},
             {"perturbed_q": "does a P.O. box contain the street address", "answer": "TRUE"},
         ]},
        {"title": "Cloak", "paragraph": "A cape is a cloak.", "question": "is a cape a cloak",
         "answer": "TRUE", "perturbed_questions": [{"perturbed_q": "", "answer": ""}]},
        {"title": "Kindle", "paragraph": "The Fire was called Kindle Fire.",
         "question": "is a fire the same as a kindle", "answer": "TRUE",
         "perturbed_questions": [{"perturbed_q": "is a fire unlike a kindle",
                                  "answer": "FALSE"}]},
    ]  # fmt: skip
    expected = {"boolq-1": ["boolq-1-0", "boolq-1-1", "boolq-1-2"], "boolq-3": ["boolq-3-0"]}
    return [("boolq_perturbed.json", _json({"data": data}))], expected


def perspectrum() -> Built:
    header = [
        "original_claim",
        "contrast_claim",
        "perspective",
        "original_relevance_label",
        "original_stance_label",
        "contrast_relevance_label",
        "contrast_stance_label",
    ]
    rows = [
        ["Zoos should close.", "Zoos should stay open.", "Zoos save species.", "1", "neg", "1",
         "pos"],
        ["Zoos should close.", "Zoos should stay open.", "Toilets have lids.", "0", "unk", "0",
         "unk"],
        ["Homework helps.", "Homework harms.", "Practice builds skill.", "1", "pos", "1", "neg"],
        ["Tea is healthy.", "Tea is harmful.", "Tea has antioxidants.", "1", "pos", "0", "unk"],
    ]  # fmt: skip
    files = [("perspectrum_contrast_sets.csv", _csv(header, rows))]
    return files, {"perspectrum-2": ["perspectrum-2-contrast"],
                   "perspectrum-4": ["perspectrum-4-contrast"],
                   "perspectrum-5": ["perspectrum-5-contrast"]}  # fmt: skip


def mctaco() -> Built:
    header = ["index", "sentence1", "sentence2", "label"]
    slept, napped = "He slept. How long did he sleep?", "He napped. How long did he nap?"
    original = _tsv(header, [["0", slept, "8 hours", "yes"], ["1", slept, "8 years", "no"]])
    changed = _tsv(header, [["0", napped, "8 hours", "no"], ["1", napped, "20 minutes", "yes"]])
    files = [("original.tsv", original), ("changed.tsv", changed)]
    return files, {"0": ["0"], "1": ["1"]}  # an original and its perturbation share the index


MARKED = "<p>He <span style='color:red;'><strong>said </strong></span>it <span style='color:blue;'><strong>rained </strong></span>.</p>"  # noqa: E501


def matres() -> Built:
    header = ["", "_unit_id", "bodygraph", "docid", "decision", "modified bodygraph",
              "new decision", "reason"]  # fmt: skip
    moved = MARKED.replace("it ", "it would ").replace("rained", "rain")
    rows = [
        ["7035", "1702137528", MARKED, "nyt_1", "after", moved, "before", "tense"],
        ["7035", "1702137528", MARKED, "nyt_1", "after", MARKED.replace("said", "says"),
         "equal", "tense"],
        ["7128", "1702137622", MARKED, "nyt_2", "before", "<p>It rained.</p>" + MARKED,
         "vague", "appearance order"],
    ]  # fmt: skip
    files = [("Platinum_subset_minimal_pairs.csv", _csv(header, rows))]
    return files, {"1702137528": ["1702137528-1", "1702137528-2"],
                   "1702137622": ["1702137622-1"]}  # fmt: skip


def nlvr2() -> Built:
    def line(identifier: str, sentence: str, label: str, right: str = "b") -> str:
        return json.dumps({"sentence": sentence, "left_url": "https://img.example/a.jpg",
                           "right_url": f"https://img.example/{right}.jpg",
                           "identifier": identifier, "writer": 0, "label": label})  # fmt: skip

    lines = [
        line("test1-769-1-0-1", "There are two dogs.", "False"),
        line("test1-769-1-0-2", "There are three dogs.", "True", right="c"),
        line("test1-769-1-0-3", "There are four dogs.", "False"),
        line("test1-256-2-0-1", "A cat sleeps.", "True"),
        line("test1-256-2-0-2", "No cat sleeps.", "False"),
    ]
    files = [("contrast_set_nlvr2.jsonl", "\n".join(lines).encode())]
    return files, {"test1-769-1-0-1": ["test1-769-1-0-2", "test1-769-1-0-3"],
                   "test1-256-2-0-1": ["test1-256-2-0-2"]}  # fmt: skip


def _qa(question: str, qid: str, spans: list[str], **more: Any) -> dict[str, Any]:
    return {"question": question, "id": qid, "answers": [{"text": s} for s in spans], **more}


QUOREF_CONTEXT = "Traci and her boyfriend Gibson drive. Gibson vanishes. Traci finds him."


def quoref() -> Built:
    """A multi-span answer, two perturbations of one question, and an edited context (which
    the project keeps read-only)."""
    original = {"data": [{"title": "Alien 51", "paragraphs": [{
        "context": QUOREF_CONTEXT, "context_id": "c1",
        "qas": [_qa("Who drives?", "q1", ["Traci", "Gibson"]),
                _qa("Who vanishes?", "q2", ["Gibson"])]}]}]}  # fmt: skip
    perturbed = {"data": [{"title": "Alien 51", "paragraphs": [
        {"context": QUOREF_CONTEXT, "context_id": "c1",
         "qas": [_qa("Who does not vanish?", "p1", ["Traci"], original_id="q2"),
                 _qa("Who drives and vanishes?", "p2", ["Gibson"], original_id="q1")]},
        {"context": QUOREF_CONTEXT.replace("Gibson vanishes", "Traci vanishes"), "context_id": "c2",
         "qas": [_qa("Who vanishes?", "p3", ["Traci"], original_id="q2")]},
    ]}]}  # fmt: skip
    files = [("quoref_original_subset_20191206_merged.json", _json(original)),
             ("quoref_test_perturbations_20191206_merged.json", _json(perturbed))]  # fmt: skip
    return files, {"q2": ["p1", "p3"], "q1": ["p2"]}


ROPES_BACKGROUND = "Warming up raises the heart rate."


def ropes() -> Built:
    """Answers "A" and "B", which SQuAD's rules normalise to nothing; a perturbation that keeps
    its original's id; one that edits the background (read-only)."""

    def paragraph(situation: str, qa: dict[str, Any], background: str = ROPES_BACKGROUND) -> Any:
        return {"background": background, "situation": situation, "qas": [qa]}

    situation = "Group A warmed up. Group B did not."
    original = {"version": 1.1, "data": [{"title": "ropes", "paragraphs": [
        paragraph(situation, _qa("Which group has a higher heart rate?", "111", ["A"])),
        paragraph(situation, _qa("Which group has a lower heart rate?", "222", ["B"])),
    ]}]}  # fmt: skip
    contrast = {"version": 1.1, "data": [{"title": "ropes", "paragraphs": [
        paragraph(situation, _qa("Which group has a lower heart rate?", "111", ["B"])),
        paragraph(situation, _qa("Which group has a lower heart rate?", "333", ["A"]),
                  background="Warming up lowers the heart rate."),
    ]}]}  # fmt: skip
    files = [("ropes_contrast_set_original_032820.json", _json(original)),
             ("ropes_contrast_set_032820.json", _json(contrast))]  # fmt: skip
    return files, {"111": ["111"], "222": ["333"]}


def _drop_answer(number: str = "", spans: tuple[str, ...] = (), year: str = "") -> Any:
    return {"number": number, "date": {"day": "", "month": "", "year": year},
            "spans": list(spans)}  # fmt: skip


DROP_PASSAGE = "In 1560 Mem de Sa had 26 warships and 2,000 soldiers. In 1565 Rio was founded."


def drop() -> Built:
    """DROP's own test set (originals, many more than were perturbed) and the contrast file:
    numbers, a date, single and multi-span answers, validated alternatives."""
    originals = {"history_1": {"passage": DROP_PASSAGE, "qa_pairs": [
        {"question": "How many warships?", "query_id": "aaa",
         "answer": _drop_answer(number="26"),
         "validated_answers": [_drop_answer(number="26"), _drop_answer(spans=("26 warships",))]},
        {"question": "What did he have?", "query_id": "bbb",
         "answer": _drop_answer(spans=("warships", "soldiers"))},
        {"question": "Not perturbed?", "query_id": "ccc", "answer": _drop_answer(number="1")},
    ]}}  # fmt: skip
    contrast = {"history_1": {"passage": DROP_PASSAGE, "qa_pairs": [
        {"question": "How many soldiers?", "original_question": "How many warships?",
         "query_id": "aaa_1", "answer": _drop_answer(number="2000")},
        {"question": "When was Rio founded?", "original_question": "How many warships?",
         "query_id": "aaa_2", "answer": _drop_answer(year="1565"),
         "validated_answers": [_drop_answer(number="1565")]},
        {"question": "What did he lack?", "original_question": "What did he have?",
         "query_id": "bbb_1", "answer": _drop_answer(spans=("cannons",))},
    ]}}  # fmt: skip
    files = [("drop_dataset_test.json", _json(originals)),
             ("drop_contrast_sets_test.json", _json(contrast))]  # fmt: skip
    return files, {"aaa": ["aaa_1", "aaa_2"], "bbb": ["bbb_1"]}


BUILDERS = {
    "imdb": imdb, "boolq": boolq, "perspectrum": perspectrum, "quoref": quoref, "ropes": ropes,
    "drop": drop, "mctaco": mctaco, "matres": matres, "nlvr2": nlvr2,
}  # fmt: skip
