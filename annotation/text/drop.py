"""DROP's answer metric (Dua et al., 2019; docs/metrics.md), which Quoref's and DROP's contrast
sets are scored with: numbers compared as numbers, and a multi-span answer's spans aligned one
to one with the predicted spans. Written from the metric's definition in the DROP paper and its
evaluation script's documented behaviour.

- An answer is a text or a list of spans. Each span is normalised token by token (tokens split
  on spaces and hyphens): lower-cased, punctuation removed unless the token is a number, a
  number written as a float ("2" -> "2.0"), articles removed; empty tokens dropped.
- Exact match: the predicted and gold spans, normalised, are the same set and as many.
- F1: each span is a bag of its tokens; gold and predicted bags are paired one to one to
  maximise the summed F1 (the Hungarian algorithm); a pair whose gold bag holds numbers and
  shares none with the predicted bag scores 0. F1 is the mean over max(#gold, #predicted)
  (unpaired spans score 0), rounded to two decimals.
"""

import re
import string
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = set(string.punctuation)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _token(token: str) -> str:
    token = token.lower()
    if not _is_number(token):
        token = "".join(ch for ch in token if ch not in _PUNCTUATION)
    if _is_number(token):
        token = str(float(token))
    return " ".join(_ARTICLES.sub(" ", token).split())


def normalize_span(text: str) -> str:
    return " ".join(t for t in (_token(token) for token in re.split(" |-", text)) if t.strip())


def _bags(answer: Any) -> tuple[list[str], list[set[str]]]:
    spans = [answer] if isinstance(answer, str) else list(answer)
    normal = [normalize_span(span) for span in spans]
    return normal, [set(span.split()) for span in normal]


def _bag_f1(predicted: set[str], gold: set[str]) -> float:
    common = len(gold & predicted)
    precision = common / len(predicted) if predicted else 1.0
    recall = common / len(gold) if gold else 1.0
    if precision == 0.0 and recall == 0.0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def _numbers_agree(gold: set[str], predicted: set[str]) -> bool:
    numbers = {word for word in gold if _is_number(word)}
    return not numbers or bool(numbers & {word for word in predicted if _is_number(word)})


def drop_em_f1(predicted: Any, gold: Any) -> tuple[float, float]:
    """EM and F1 of one prediction against one gold answer (a text or a list of spans)."""
    predicted_spans, predicted_bags = _bags(predicted)
    gold_spans, gold_bags = _bags(gold)
    same = set(predicted_spans) == set(gold_spans) and len(predicted_spans) == len(gold_spans)
    scores = np.zeros((len(gold_bags), len(predicted_bags)))
    for i, g in enumerate(gold_bags):
        for j, p in enumerate(predicted_bags):
            if _numbers_agree(g, p):
                scores[i, j] = _bag_f1(p, g)
    rows, columns = linear_sum_assignment(-scores)
    best = np.zeros(max(len(gold_bags), len(predicted_bags)))
    for row, column in zip(rows, columns, strict=True):
        best[row] = max(best[row], scores[row, column])
    return float(same), round(float(np.mean(best)), 2)


def drop_best(predicted: Any, golds: list[Any]) -> tuple[float, float]:
    """The best EM and the best F1 over the gold answers (each taken on its own, as DROP does)."""
    pairs = [drop_em_f1(predicted, gold) for gold in golds]
    return max((em for em, _ in pairs), default=0.0), max((f1 for _, f1 in pairs), default=0.0)
