"""Scoring a release with a served model (evaluation/runners/served.py, docs/models.md), on a
worker.

The prompts and shots are the local language models' (evaluation/runs/prompting.py), so the
figures compare. Classification scores each label's words by log-likelihood (`acc`,
`acc_norm`), or, for a server that only answers in text, generates an answer and reads the
label it names (`label_named`); an answer that names none is "unparsed": counted wrong, and
counted on the run. Free text is generated and scored by the project's answer rules.

Every answer is stored as it arrives (ServedAnswer), so that a run that is killed, cancelled
or retried asks the server only for what it has not answered yet.
"""

import re
from collections import defaultdict
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from annotation.models import Release
from annotation.prompting import Prompting
from evaluation.models import EvaluationRun, ModelSpec, ServedAnswer
from evaluation.runners.base import RunnerError
from evaluation.runners.served import (
    Answer,
    Request,
    ServedModel,
    generation_request,
    loglikelihood_request,
)
from evaluation.runs.prompting import choice_rows, contexts, first_answer, shot_pool
from evaluation.runs.scoring import label_metrics, prediction_row, scored_answers
from evaluation.specs.hosts import refusal
from evaluation.specs.secrets import decrypt
from evaluation.specs.services import is_trusted

Scoring = ModelSpec.Scoring
EDGES = " \t\r\n\"'`.,;:!?()[]{}*_"


def run_served(
    run: EvaluationRun,
    spec: ModelSpec,
    release: Release,
    examples: list[dict[str, Any]],
    advance: Any,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    project = release.project
    prompting = Prompting.of(project, spec.prompt, spec.verbalizers)
    by_choice = not project.is_free_text and spec.scoring == Scoring.LOGLIKELIHOOD
    asked = requests_of(spec, release, examples)
    answers = ask(run, spec, asked, advance)
    usage = usage_of(spec, answers.values())
    if by_choice:
        lls = [[answers[r.key].value["ll"] for r in requests] for requests in asked]
        rows, metrics = choice_rows(project, examples, prompting.words, lls)
    else:
        outputs = [_cut(answers[r[0].key].value["text"], spec.stop or []) for r in asked]
        if project.is_free_text:
            rows, metrics = scored_answers(project, examples, outputs)
        else:
            rows, metrics = named_labels(project, prompting, examples, outputs)
    return rows, {**metrics, "usage": usage}


def requests_of(
    spec: ModelSpec, release: Release, examples: list[dict[str, Any]]
) -> list[list[Request]]:
    """Each example's requests: one per label (log-likelihoods), or one generation."""
    project = release.project
    prompting = Prompting.of(project, spec.prompt, spec.verbalizers)
    pool = shot_pool(spec, release)
    if project.is_free_text:
        shot_answer = first_answer
    else:
        shot_answer = lambda example: prompting.word_of[example["label"]]  # noqa: E731
    texts = contexts(spec, prompting, pool, examples, shot_answer)
    if not project.is_free_text and spec.scoring == Scoring.LOGLIKELIHOOD:
        options = [spec.target_delimiter + word for word in prompting.words]
        return [[loglikelihood_request(spec.source, t, o) for o in options] for t in texts]
    return [
        [
            generation_request(
                spec.source,
                t,
                chat=spec.chat_template,
                max_tokens=spec.max_new_tokens,
                stop=spec.stop or [],
            )
        ]
        for t in texts
    ]


def ask(
    run: EvaluationRun, spec: ModelSpec, asked: list[list[Request]], advance: Any
) -> dict[str, Answer]:
    """Every request's answer: those stored by an earlier attempt of this run, and the others
    from the server, each stored as it arrives. `advance` hears of examples as their last
    request is answered."""
    answers = stored_answers(run, {r.key for requests in asked for r in requests})
    waiting: dict[str, list[int]] = defaultdict(list)
    left = [0] * len(asked)
    for example, requests in enumerate(asked):
        for key in {r.key for r in requests} - set(answers):
            waiting[key].append(example)
            left[example] += 1
    advance(left.count(0))
    todo = {r.key: r for requests in asked for r in requests if r.key in waiting}
    for group in _client(spec).answers(todo.values()):
        ServedAnswer.objects.bulk_create(
            [
                ServedAnswer(
                    run=run,
                    key=r.key,
                    value=a.value,
                    prompt_tokens=a.prompt_tokens,
                    completion_tokens=a.completion_tokens,
                )
                for r, a in group
            ],
            ignore_conflicts=True,
        )
        finished = 0
        for request, answer in group:
            answers[request.key] = answer
            for example in waiting.pop(request.key):
                left[example] -= 1
                finished += left[example] == 0
        advance(finished)
    return answers


def stored_answers(run: EvaluationRun, keys: set[str]) -> dict[str, Answer]:
    """The answers an earlier attempt of the run stored for these requests (a shard asks only
    for its own)."""
    answers = {}
    ordered = sorted(keys)
    for start in range(0, len(ordered), 5000):
        for a in ServedAnswer.objects.filter(run=run, key__in=ordered[start : start + 5000]):
            answers[a.key] = Answer(a.value, a.prompt_tokens, a.completion_tokens)
    return answers


def _client(spec: ModelSpec) -> ServedModel:
    check = None
    if not is_trusted(spec):  # the host is checked again here: a name may resolve elsewhere

        def check() -> None:
            if problem := refusal(urlsplit(spec.base_url).hostname or ""):
                raise RunnerError(problem)

    return ServedModel(
        spec.base_url,
        spec.source,
        api_key=decrypt(spec.api_key_encrypted),
        concurrency=spec.concurrency,
        timeout=spec.timeout,
        retries=settings.SERVED_MODEL_RETRIES,
        backoff_max=settings.SERVED_MODEL_BACKOFF_MAX,
        check=check,
    )


def label_named(text: str, words: dict[str, str]) -> str:
    """The label a generated answer names, or "" if it names none or several: the answer's
    first line, without the spaces, quotes and punctuation around it, compared without case
    with each label and its words; it is one of them, or starts with exactly one followed by
    a character that is not a letter or digit ("Positive." and "positive, because ..." name
    positive; "not positive" names nothing)."""
    line = text.strip().split("\n")[0].strip(EDGES).casefold()
    names = {label: {label.casefold(), word.casefold()} for label, word in words.items()}
    exact = [label for label, said in names.items() if line in said]
    if len(exact) == 1:
        return exact[0]
    starts = [
        label
        for label, said in names.items()
        if any(re.match(re.escape(name) + r"(?![^\W_])", line) for name in said)
    ]
    return starts[0] if len(starts) == 1 else ""


def named_labels(
    project: Any, prompting: Prompting, examples: list[dict[str, Any]], outputs: list[str]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Prediction rows and label metrics of the answers, each read as the label it names."""
    predicted = [label_named(text, prompting.word_of) for text in outputs]
    rows = [
        prediction_row(example, label=label, output=text)
        for example, label, text in zip(examples, predicted, outputs, strict=True)
    ]
    metrics = label_metrics(project, examples, predicted)
    metrics["unparsed"] = predicted.count("")
    return rows, metrics


def _cut(text: str, stop: list[str]) -> str:
    """The answer before the first stop sequence (a server may not apply them all)."""
    for sequence in stop:
        text = text.split(sequence)[0] if sequence else text
    return text.strip()


def usage_of(spec: ModelSpec, answers: Any) -> dict[str, Any]:
    """Requests and tokens of the run (the server's own counts), and their cost where the
    admin gave prices per million tokens."""
    answers = list(answers)
    prompt = sum(a.prompt_tokens for a in answers)
    completion = sum(a.completion_tokens for a in answers)
    usage: dict[str, Any] = {
        "requests": len(answers),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
    }
    if spec.price_prompt is not None or spec.price_completion is not None:
        cost = prompt * (spec.price_prompt or 0) + completion * (spec.price_completion or 0)
        usage["cost"] = round(cost / 1e6, 6)
    return usage
