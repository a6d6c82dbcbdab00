"""lm-evaluation-harness helpers for a ContrastLab release, copied into the bundle as
lm_eval/utils.py (docs/prompting.md). It needs only the harness (with its scipy) and
`datasets` (with its pyarrow).

- `load` gives a split's docs, from any working directory: a classification project's are the
  rows of ../data/examples/{split}.parquet, each with its query rendered by the prompt in
  prompt.json, its choices and gold; a free-text or minimal-pair project's are the JSON lines
  beside this file ({split}.jsonl), as are every split's in releases written before the docs
  were read from the Parquet table.
- `process_choices` (classification): `acc` and `acc_norm` as the harness computes them.
- `process_answers` (free text): exact match and token F1 against the best answer, by the
  project's answer rules, read from answer_rules.json beside this file (as ContrastLab scores
  its runs, docs/metrics.md): SQuAD's normalisation, ROPES's (articles kept), or DROP's metric
  (numbers as numbers, the spans of a multi-span answer aligned one to one).
- `process_pairs` (minimal pairs): right when the acceptable sentence scores strictly higher.
- `consistency`: the share of contrast sets whose every member (or pair) is right; a free-text
  member is right by the project's rule: an exact match, or an F1 above 0.8.
"""

import json
import os
import re
import string
from collections import Counter, defaultdict

import datasets
import pyarrow.parquet as pq  # datasets' own reader
from scipy.optimize import linear_sum_assignment

HERE = os.path.dirname(os.path.abspath(__file__))
CONSISTENT_F1 = 0.8


def load(split="test", **_):
    lines = os.path.join(HERE, f"{split}.jsonl")
    if os.path.exists(lines):
        with open(lines, encoding="utf-8") as docs:
            return {split: datasets.Dataset.from_list([json.loads(line) for line in docs])}
    return {split: datasets.Dataset.from_list(list(table_docs(split)))}


def table_docs(split):
    """The docs of a split whose examples are its Parquet table's rows: each with the
    prompt's query over its fields (a missing field as an empty text), its choices and the
    index of its label among the project's labels."""
    with open(os.path.join(HERE, "prompt.json"), encoding="utf-8") as file:
        prompt = json.load(file)
    fields = prompt["fields"]
    path = os.path.join(HERE, os.pardir, "data", "examples", f"{split}.parquet")
    columns = ["set_id", "split", "id", "role", *fields, "label"]
    gold = {label: n for n, label in enumerate(prompt["labels"])}
    for row in pq.read_table(path, columns=columns).to_pylist():
        query = "".join(
            piece if isinstance(piece, str) else row[piece["field"]] or ""
            for piece in prompt["pieces"]
        )
        label = row.pop("label")
        choices = {"choices": prompt["choices"], "gold": gold.get(label)}
        yield {**row, "query": query, "label": label, **choices}


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


def _read_rules():
    try:
        with open(os.path.join(HERE, "answer_rules.json"), encoding="utf-8") as file:
            return json.load(file)
    except FileNotFoundError:
        return {}


RULES = {"normalization": "squad", "consistency": "f1", **_read_rules()}
ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
PUNCTUATION = set(string.punctuation)


def normalize(text, articles=True):
    """SQuAD's: lowercase, drop punctuation and the articles a/an/the, collapse spaces; ROPES's
    keeps the articles (its answers "A" and "B" name groups)."""
    text = "".join(ch for ch in text.lower() if ch not in PUNCTUATION)
    return " ".join((ARTICLES.sub(" ", text) if articles else text).split())


def _f1(prediction, gold, articles=True):
    predicted, wanted = normalize(prediction, articles).split(), normalize(gold, articles).split()
    if not predicted or not wanted:
        return float(predicted == wanted)
    common = sum((Counter(predicted) & Counter(wanted)).values())
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _drop_token(token):
    token = token.lower()
    if not _is_number(token):
        token = "".join(ch for ch in token if ch not in PUNCTUATION)
    if _is_number(token):
        token = str(float(token))
    return " ".join(ARTICLES.sub(" ", token).split())


def _drop_span(text):
    return " ".join(t for t in (_drop_token(x) for x in re.split(" |-", text)) if t.strip())


def _bag_f1(predicted, gold):
    common = len(gold & predicted)
    precision = common / len(predicted) if predicted else 1.0
    recall = common / len(gold) if gold else 1.0
    if precision == 0.0 and recall == 0.0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def drop_em_f1(predicted, gold):
    """DROP's metric (Dua et al., 2019) of one prediction against one gold answer, each a list
    of spans: EM when the normalised spans are the same set and as many; F1 over spans paired
    one to one (Hungarian), a pair whose gold holds numbers none of which the prediction has
    scoring 0, averaged over the larger count and rounded to two decimals."""
    predicted_spans = [_drop_span(s) for s in predicted]
    gold_spans = [_drop_span(s) for s in gold]
    same = set(predicted_spans) == set(gold_spans) and len(predicted_spans) == len(gold_spans)
    p_bags = [set(s.split()) for s in predicted_spans]
    g_bags = [set(s.split()) for s in gold_spans]
    scores = [[0.0] * len(p_bags) for _ in g_bags]
    for i, g in enumerate(g_bags):
        numbers = {w for w in g if _is_number(w)}
        for j, p in enumerate(p_bags):
            if not numbers or numbers & {w for w in p if _is_number(w)}:
                scores[i][j] = _bag_f1(p, g)
    rows, columns = linear_sum_assignment([[-v for v in row] for row in scores])
    best = [0.0] * max(len(g_bags), len(p_bags))
    for row, column in zip(rows, columns, strict=True):
        best[row] = max(best[row], scores[row][column])
    return float(same), round(sum(best) / len(best), 2)


def em_f1(prediction, golds):
    """The best exact match and the best F1 over the gold answers (each a list of spans), by
    the project's normalisation."""
    if not golds:
        return 0.0, 0.0
    if RULES["normalization"] == "drop":
        pairs = [drop_em_f1([prediction], gold) for gold in golds]
        return max(em for em, _ in pairs), max(f1 for _, f1 in pairs)
    articles = RULES["normalization"] == "squad"
    texts = [" | ".join(gold) for gold in golds]  # a multi-span answer as one text
    em = float(any(normalize(prediction, articles) == normalize(t, articles) for t in texts))
    return em, max(_f1(prediction, t, articles) for t in texts)


def right(em, f1):
    return em == 1.0 if RULES["consistency"] == "em" else f1 > CONSISTENT_F1


def process_answers(doc, results):
    prediction = results[0].strip()  # as ContrastLab strips a generated answer
    golds = doc.get("answer_spans") or [[a] for a in doc["answers"]]
    em, f1 = em_f1(prediction, golds)
    return {"exact_match": em, "f1": f1, "consistency": (doc["set_id"], right(em, f1))}


def consistency(items):
    sets = defaultdict(lambda: True)
    for set_id, right in items:
        sets[set_id] = sets[set_id] and bool(right)
    return sum(sets.values()) / len(sets) if sets else 0.0
