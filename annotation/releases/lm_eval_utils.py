"""lm-evaluation-harness helpers for a ContrastLab release, copied into the bundle as
lm_eval/utils.py (docs/prompting.md). It needs only the harness and `datasets`.

- `load` reads a split's docs from the JSONL beside this file, from any working directory.
- `process_choices` (classification): `acc` and `acc_norm` as the harness computes them.
- `process_answers` (free text): SQuAD's exact match and token F1 against the best answer.
- `process_pairs` (minimal pairs): right when the acceptable sentence scores strictly higher.
- `consistency`: the share of contrast sets whose every member (or pair) is right; a free-text
  member is right when its F1 is above 0.8.
"""

import json
import os
import re
import string
from collections import Counter, defaultdict

import datasets

HERE = os.path.dirname(os.path.abspath(__file__))
CONSISTENT_F1 = 0.8


def load(split="test", **_):
    with open(os.path.join(HERE, f"{split}.jsonl"), encoding="utf-8") as lines:
        return {split: datasets.Dataset.from_list([json.loads(line) for line in lines])}


def _argmax(values):
    return max(range(len(values)), key=lambda i: (values[i], -i))  # the first of equals


def process_choices(doc, results):
    lls = [result[0] for result in results]
    normed = [ll / len(choice) for ll, choice in zip(lls, doc["choices"], strict=True)]
    right = _argmax(lls) == doc["gold"]
    return {
        "acc": float(right),
        "acc_norm": float(_argmax(normed) == doc["gold"]),
        "consistency": (doc["set_id"], right),
    }


def process_pairs(doc, results):
    right = results[0][0] > results[1][0]
    return {"acc": float(right), "consistency": (doc["set_id"], right)}


def normalize(text):
    """SQuAD's: lowercase, drop punctuation and the articles a/an/the, collapse spaces."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def _f1(prediction, gold):
    predicted, wanted = normalize(prediction).split(), normalize(gold).split()
    if not predicted or not wanted:
        return float(predicted == wanted)
    common = sum((Counter(predicted) & Counter(wanted)).values())
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def process_answers(doc, results):
    prediction, answers = results[0], doc["answers"]
    em = float(any(normalize(prediction) == normalize(a) for a in answers))
    f1 = max((_f1(prediction, a) for a in answers), default=0.0)
    return {"exact_match": em, "f1": f1, "consistency": (doc["set_id"], f1 > CONSISTENT_F1)}


def consistency(items):
    sets = defaultdict(lambda: True)
    for set_id, right in items:
        sets[set_id] = sets[set_id] and bool(right)
    return sum(sets.values()) / len(sets) if sets else 0.0
