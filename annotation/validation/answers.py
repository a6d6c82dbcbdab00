"""Free-text answers (docs/metrics.md, docs/task-types.md): SQuAD normalisation, token F1, and how
responses match.

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


def answer_text(answer: Any) -> str:
    """An answer as one text: a multi-span answer's spans joined by " | " (punctuation, so that
    SQuAD's rules score it as the spans' words)."""
    return answer if isinstance(answer, str) else SPAN_SEPARATOR.join(answer)


def answer_key(answer: Any, articles: bool = True) -> Any:
    """What two answers must share to be the same: the normalised text, or for several spans
    the set of the normalised spans."""
    if isinstance(answer, str):
        return normalize_answer(answer, articles)
    return frozenset(normalize_answer(span, articles) for span in answer)


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


def same_answers(first: list[Any], second: list[Any]) -> bool:
    """Whether two answer lists say the same thing once normalised (authoring's label change)."""
    return {answer_key(a) for a in first} == {answer_key(a) for a in second}


def clean_answers(value: object, published: bool = False) -> list[Answer] | str:
    """The answers as a list of distinct non-empty answers (a text, or a list of two or more
    spans), or what is wrong with them. A `published` set keeps answers that normalise to
    nothing under SQuAD's rules (ROPES's group "A")."""
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
    if not published and any(not normalize_answer(answer_text(a)) for a in answers):
        return "each answer needs a word or number; punctuation and articles alone normalise away."
    return answers


def _answer_shape(answer: object) -> bool:
    return isinstance(answer, str) or (
        isinstance(answer, list) and all(isinstance(span, str) for span in answer)
    )


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
