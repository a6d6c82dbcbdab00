"""Free-text answers (docs/metrics.md, docs/task-types.md): normalisation, token F1 (SQuAD's,
and DROP's metric, below), how responses match, and `AnswerRules`, the one object through
which every workflow (imports, the editor, votes, resolution, agreement, releases and scoring)
reads a project's answer rules.

An answer is a text, or the list of spans of one multi-span answer (Quoref, DROP); a project's
answers are alternatives, any of which is right. A response is an answer string or an extra
label (e.g. "unanswerable"). Two answers match when
their normalised token F1 reaches the project's `answer_match_f1`; an extra label matches only
itself, and never an answer.
"""

import re
import string
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

Answer = str | list[str]  # a text, or the spans of one multi-span answer
SPAN_SEPARATOR = " | "

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str, articles: bool = True) -> str:
    """SQuAD's: lowercase, strip punctuation and the articles a/an/the, collapse whitespace.
    `articles=False` keeps the articles, as ROPES's evaluation does (its answers "A" and "B"
    name groups of a situation)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join((_ARTICLES.sub(" ", text) if articles else text).split())


def split_spans(lines: list[str]) -> list[Answer]:
    """Answers typed one per line, the spans of a multi-span answer separated by " | "."""
    return [line.split(SPAN_SEPARATOR) if SPAN_SEPARATOR in line else line for line in lines]


def answer_text(answer: Any) -> str:
    """An answer as one text: a multi-span answer's spans joined by " | " (punctuation, so that
    SQuAD's rules score it as the spans' words)."""
    return answer if isinstance(answer, str) else SPAN_SEPARATOR.join(answer)


def token_f1(prediction: str, gold: str, articles: bool = True) -> float:
    predicted = normalize_answer(prediction, articles).split()
    wanted = normalize_answer(gold, articles).split()
    if not predicted or not wanted:
        return float(predicted == wanted)
    common = sum((Counter(predicted) & Counter(wanted)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def best_f1(prediction: Any, golds: list[Any], articles: bool = True) -> float:
    text = answer_text(prediction)
    return max((token_f1(text, answer_text(gold), articles) for gold in golds), default=0.0)


def best_em(prediction: Any, golds: list[Any], articles: bool = True) -> float:
    normal = normalize_answer(answer_text(prediction), articles)
    return float(any(normal == normalize_answer(answer_text(g), articles) for g in golds))


def clean_answers(value: object, rules: "AnswerRules | None" = None) -> list[Answer] | str:
    """The answers as a list of distinct non-empty answers (a text, or a list of two or more
    spans), or what is wrong with them: with `rules`, an answer they normalise to nothing
    (under SQuAD's, ROPES's group "A"); without, any answer is kept (imports keep them and
    warn, `AnswerRules.erased`)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(_answer_shape(a) for a in value):
        return "answers must be a list of answers: strings, or lists of spans (strings)."
    answers: list[Answer] = []
    for a in value:
        spans = [s.strip() for s in ([a] if isinstance(a, str) else a) if s.strip()]
        answer: Answer = spans[0] if len(spans) == 1 else spans
        if spans and answer not in answers:
            answers.append(answer)
    if not answers:
        return "answers must hold at least one non-empty answer."
    if rules is not None and (erased := rules.erased(answers)):
        return (
            f"each answer needs a word or number; {erased[0]!r} normalises to nothing "
            f"under {rules.name}'s rules."
        )
    return answers


def _answer_shape(answer: object) -> bool:
    return isinstance(answer, str) or (
        isinstance(answer, list) and all(isinstance(span, str) for span in answer)
    )


@dataclass(frozen=True)
class AnswerRules:
    """A free-text project's answer rules (docs/metrics.md), read from its settings by `of`:
    how answers normalise (`answer_normalization`: squad drops articles, ropes keeps them,
    drop compares numbers as numbers and aligns spans), the token F1 at which two answers
    match (`answer_match_f1`, validators), and when a set member is right for consistency
    (`answer_consistency`: em, or f1 over 0.8)."""

    normalization: str = "squad"
    consistency: str = "f1"
    match_f1: float = 0.8

    @classmethod
    def of(cls, project: Any) -> "AnswerRules":
        return cls(
            project.setting("answer_normalization"),
            project.setting("answer_consistency"),
            project.setting("answer_match_f1"),
        )

    @property
    def name(self) -> str:
        return {"squad": "SQuAD", "ropes": "ROPES", "drop": "DROP"}[self.normalization]

    def normalize(self, text: str) -> str:
        if self.normalization == "drop":
            return normalize_span(text)
        return normalize_answer(text, self.normalization == "squad")

    def key(self, answer: Any) -> Any:
        """What two answers must share to be the same (authoring's "the answers changed")."""
        if isinstance(answer, str):
            return self.normalize(answer)
        return frozenset(self.normalize(span) for span in answer)

    def same(self, first: list[Any], second: list[Any]) -> bool:
        return {self.key(a) for a in first} == {self.key(a) for a in second}

    def erased(self, answers: list[Any]) -> list[str]:
        """The answers these rules normalise to nothing (SQuAD's "A"): none can be matched."""
        return [answer_text(a) for a in answers if not self.normalize(answer_text(a))]

    def em_f1(self, prediction: Any, golds: list[Any]) -> tuple[float, float]:
        """The best exact match and token F1 of an answer against alternatives."""
        if self.normalization == "drop":
            return drop_best(prediction, golds)
        articles = self.normalization == "squad"
        return best_em(prediction, golds, articles), best_f1(prediction, golds, articles)

    def right(self, em: float, f1: float) -> bool:
        """Whether a set member counts as right for consistency."""
        return em == 1.0 if self.consistency == "em" else f1 > CONSISTENT_F1

    def matches(self, response: "Response", answers: list[Any], label: str) -> bool:
        """Whether a response agrees with an outcome: answers, or an extra label."""
        if response.label or label:
            return bool(response.label) and response.label == label
        return self.em_f1(response.answer, answers)[1] >= self.match_f1

    def pairwise(self, first: "Response", second: "Response") -> float:
        """How far two validators' responses agree: F1 of two answers; 1 or 0 otherwise."""
        if first.label or second.label:
            return float(first.label == second.label)
        return self.em_f1(first.answer, [second.answer])[1]

    def resolve(self, responses: list["Response"], gold: list[Any], majority: int) -> "Outcome":
        """At least `majority` responses matching the gold answers: accepted. Else at least
        `majority` answers matching one of them: disputed, under that answer. Else no majority
        (a majority on an extra label such as "unanswerable" too, as for labels: an extra
        label is never a release answer)."""
        if sum(self.matches(r, gold, "") for r in responses) >= majority:
            return Outcome("accepted", list(gold))
        best: tuple[int, Response] | None = None
        for candidate in responses:
            support = sum(self.matches(r, [candidate.answer], candidate.label) for r in responses)
            if support >= majority and (best is None or support > best[0]):
                best = (support, candidate)
        if best is None:
            return Outcome("no_majority", [])
        if best[1].label:
            return Outcome("no_majority", [], best[1].label)
        return Outcome("disputed", [best[1].answer])


CONSISTENT_F1 = 0.8  # with f1 consistency, a set is consistent iff every member's F1 is above
SQUAD = AnswerRules()  # a free-text project's rules unless its settings say otherwise


@dataclass(frozen=True)
class Response:
    """One validator's response: an answer, or an extra label."""

    answer: str = ""
    label: str = ""


@dataclass(frozen=True)
class Outcome:
    """How five responses resolve: accepted, disputed or no majority (docs/task-types.md). `answers`
    and `label` are what the validators agreed on; agreement is measured against them."""

    status: str  # "accepted", "disputed" or "no_majority"
    answers: list[str]
    label: str = ""


# DROP's answer metric (Dua et al., 2019; docs/metrics.md), which Quoref's and DROP's contrast
# sets are scored with: numbers compared as numbers, and a multi-span answer's spans aligned one
# to one with the predicted spans. Written from the metric's definition in the DROP paper and its
# evaluation script's documented behaviour.
#
# - An answer is a text or a list of spans. Each span is normalised token by token (tokens split
#   on spaces and hyphens): lower-cased, punctuation removed unless the token is a number, a
#   number written as a float ("2" -> "2.0"), articles removed; empty tokens dropped.
# - Exact match: the predicted and gold spans, normalised, are the same set and as many.
# - F1: each span is a bag of its tokens; gold and predicted bags are paired one to one to
#   maximise the summed F1 (the Hungarian algorithm); a pair whose gold bag holds numbers and
#   shares none with the predicted bag scores 0. F1 is the mean over max(#gold, #predicted)
#   (unpaired spans score 0), rounded to two decimals.


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
