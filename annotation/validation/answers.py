"""Free-text answers (docs/metrics.md, docs/task-types.md): SQuAD normalisation, token F1, and how
responses match.

A response is an answer string or an extra label (e.g. "unanswerable"). Two answers match when
their normalised token F1 reaches the project's `answer_match_f1`; an extra label matches only
itself, and never an answer.
"""

import re
import string
from collections import Counter
from dataclasses import dataclass

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str, articles: bool = True) -> str:
    """SQuAD's: lowercase, strip punctuation and the articles a/an/the, collapse whitespace.
    `articles=False` keeps the articles, as ROPES's evaluation does (its answers "A" and "B"
    name groups of a situation)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join((_ARTICLES.sub(" ", text) if articles else text).split())


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


def best_f1(prediction: str, golds: list[str], articles: bool = True) -> float:
    return max((token_f1(prediction, gold, articles) for gold in golds), default=0.0)


def best_em(prediction: str, golds: list[str], articles: bool = True) -> float:
    normal = normalize_answer(prediction, articles)
    return float(any(normal == normalize_answer(gold, articles) for gold in golds))


def same_answers(first: list[str], second: list[str]) -> bool:
    """Whether two answer lists say the same thing once normalised (authoring's label change)."""
    return {normalize_answer(a) for a in first} == {normalize_answer(a) for a in second}


def clean_answers(value: object) -> list[str] | str:
    """The answers as a list of distinct non-empty strings, or what is wrong with them."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        return "answers must be a list of strings."
    answers = list(dict.fromkeys(a.strip() for a in value if a.strip()))
    if not answers:
        return "answers must hold at least one non-empty answer."
    if any(not normalize_answer(a) for a in answers):
        return "each answer needs a word or number; punctuation and articles alone normalise away."
    return answers


@dataclass(frozen=True)
class Response:
    """One validator's response: an answer, or an extra label."""

    answer: str = ""
    label: str = ""

    def matches(self, answers: list[str], label: str, threshold: float) -> bool:
        """Whether this response agrees with an outcome: answers, or an extra label."""
        if self.label or label:
            return bool(self.label) and self.label == label
        return best_f1(self.answer, answers) >= threshold


@dataclass(frozen=True)
class Outcome:
    """How five responses resolve: accepted, disputed or no majority (docs/task-types.md). `answers`
    and `label` are what the validators agreed on; agreement is measured against them."""

    status: str  # "accepted", "disputed" or "no_majority"
    answers: list[str]
    label: str = ""


def resolve(responses: list[Response], gold: list[str], majority: int, threshold: float) -> Outcome:
    """At least `majority` responses matching the gold answers: accepted. Else at least
    `majority` answers matching one of them: disputed, under that answer. Else no majority
    (a majority on an extra label such as "unanswerable" too, as for labels: an extra label is
    never a release answer)."""
    if sum(r.matches(gold, "", threshold) for r in responses) >= majority:
        return Outcome("accepted", list(gold))
    best: tuple[int, Response] | None = None
    for candidate in responses:
        support = sum(r.matches([candidate.answer], candidate.label, threshold) for r in responses)
        if support >= majority and (best is None or support > best[0]):
            best = (support, candidate)
    if best is None:
        return Outcome("no_majority", [])
    if best[1].label:
        return Outcome("no_majority", [], best[1].label)
    return Outcome("disputed", [best[1].answer])


def pairwise_f1(first: Response, second: Response) -> float:
    """How far two validators' responses agree: token F1 of two answers; 1 or 0 otherwise."""
    if first.label or second.label:
        return float(first.label == second.label)
    return token_f1(first.answer, second.answer)
