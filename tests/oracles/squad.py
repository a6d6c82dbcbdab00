"""SQuAD v1.1's official evaluation (Rajpurkar et al., 2016, `evaluate-v1.1.py`), restated:
`normalize_answer` lowercases, removes punctuation, the articles a/an/the and extra white space;
exact match compares normalised texts; F1 is over the bags of normalised tokens; both take the
best over the gold answers. `articles=False` keeps the articles, as ROPES's script does (Lin et
al., 2019), everything else unchanged."""

import re
import string
from collections import Counter


def normalize_answer(s: str, articles: bool = True) -> str:
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    if articles:
        s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def exact_match_score(prediction: str, ground_truth: str, articles: bool = True) -> float:
    return float(normalize_answer(prediction, articles) == normalize_answer(ground_truth, articles))


def f1_score(prediction: str, ground_truth: str, articles: bool = True) -> float:
    prediction_tokens = normalize_answer(prediction, articles).split()
    ground_truth_tokens = normalize_answer(ground_truth, articles).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(prediction_tokens)
    recall = num_same / len(ground_truth_tokens)
    return 2 * precision * recall / (precision + recall)


def best_exact_match(prediction: str, ground_truths: list[str], articles: bool = True) -> float:
    return max(exact_match_score(prediction, truth, articles) for truth in ground_truths)


def best_f1(prediction: str, ground_truths: list[str], articles: bool = True) -> float:
    return max(f1_score(prediction, truth, articles) for truth in ground_truths)
