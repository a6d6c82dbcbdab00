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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from annotation.models import Project, Release
from annotation.prompting import Prompting
from evaluation.models import EvaluationRun, ModelSpec, ServedAnswer
from evaluation.runners.base import RunnerError
from evaluation.runners.probe import Report, probe
from evaluation.runners.served import (
    Answer,
    Request,
    ServedModel,
    echo_request,
    generation_request,
    next_token_request,
)
from evaluation.runs.endpoint import clean_served, served_client, usage_of
from evaluation.runs.prompting import chosen_rows, contexts, first_answer, shot_pool
from evaluation.runs.scorer import PROMPTED, ModelKind, ScoredPart, prediction_row
from evaluation.runs.scoring import answer_rows
from evaluation.runs.sources import check_server

Scoring = ModelSpec.Scoring
EDGES = " \t\r\n\"'`.,;:!?()[]{}*_"
Advance = Callable[[int], None]
CHECK_SECONDS = 10.0  # the Check holds a web worker no longer than about this
SERVER = ("base_url", "api_key", "scoring", "concurrency", "timeout")  # its settings, with:


class Served(ModelKind):
    """A model behind an OpenAI-compatible server: labels by log-likelihood (or named in a
    generated answer), answers generated. Its notes: how the server was read (`server`) and
    the tokens of the Check's canary requests (`check`), which count in the run's usage."""

    name, label = "openai-compatible", "served model (OpenAI-compatible API)"
    task_types = (Project.TaskType.CLASSIFICATION, Project.TaskType.FREE_TEXT)
    settings = (*SERVER, "price_prompt", "price_completion", *PROMPTED)

    def clean(self, values: dict[str, Any], *, staff: bool, api_key: str) -> None:
        clean_served(values, staff=staff, api_key=api_key)

    def check(self, values: dict[str, Any], api_key: str) -> None:
        check_server(values["base_url"], values["source"], api_key)

    def probe(self, spec: ModelSpec) -> Report:
        """The Check (evaluation/runners/probe.py), within CHECK_SECONDS."""
        client = served_client(spec)
        loglikelihood = spec.scoring == Scoring.LOGLIKELIHOOD
        try:
            return probe(client, loglikelihood=loglikelihood, seconds=CHECK_SECONDS)
        finally:
            client.line.close()

    def score(
        self, run: EvaluationRun, examples: list[dict[str, Any]], advance: Advance
    ) -> ScoredPart:
        return run_served(run, run.model, run.release, examples, advance)

    def figures(self, run: EvaluationRun, notes: list[dict[str, Any]]) -> dict[str, Any]:
        """How the server was read (by the first part), and the run's usage: every answer it
        stored (every shard's, a retry's, the reused) and every part's Check."""
        counted = ("prompt_tokens", "completion_tokens", "reused")  # not the values
        stored = [
            Answer({}, *figures)
            for figures in ServedAnswer.objects.filter(run=run).values_list(*counted)
        ]
        check = [Answer({}, *tokens) for part in notes for tokens in part.get("check", [])]
        server = {"server": notes[0]["server"]} if "server" in notes[0] else {}
        return {**server, "usage": usage_of(run.model, [*stored, *check])}


def run_served(
    run: EvaluationRun,
    spec: ModelSpec,
    release: Release,
    examples: list[dict[str, Any]],
    advance: Advance,
) -> ScoredPart:
    project = release.project
    prompting = Prompting.of(project, spec.prompt, spec.verbalizers)
    texts = prompts_of(spec, release, examples)
    client = served_client(spec)
    EvaluationRun.objects.filter(pk=run.pk).update(notice="")
    try:
        return _scored(run, spec, project, prompting, client, texts, examples, advance)
    finally:
        client.line.close()
        # What the finished run (or the failed one) keeps of the server's outages.
        EvaluationRun.objects.filter(pk=run.pk).update(notice=client.outage.summary())


def _scored(
    run: EvaluationRun,
    spec: ModelSpec,
    project: Any,
    prompting: Prompting,
    client: ServedModel,
    texts: list[str],
    examples: list[dict[str, Any]],
    advance: Advance,
) -> ScoredPart:
    if not project.is_free_text and spec.scoring == Scoring.LOGLIKELIHOOD:
        lls, check, how = label_loglikelihoods(
            run, spec, client, texts, list(prompting.words), advance
        )
        notes = {"server": how, "check": _tokens(check)}
        return ScoredPart(chosen_rows(project, examples, lls), notes)
    report = server_report(
        client, loglikelihood=False, chat=spec.chat_template, beat=lambda: advance(0)
    )
    asked = [
        [
            generation_request(
                spec.source,
                text,
                chat=spec.chat_template,
                max_tokens=spec.max_new_tokens,
                stop=spec.stop or [],
            )
        ]
        for text in texts
    ]
    answers = ask(run, client, asked, advance)
    outputs = [_cut(answers[r[0].key].value["text"], spec.stop or []) for r in asked]
    if project.is_free_text:
        rows = answer_rows(project, examples, outputs)
    else:
        rows = named_labels(prompting, examples, outputs)
    return ScoredPart(rows, {"check": _tokens(report.spent)})


def _tokens(answers: list[Answer]) -> list[list[int]]:
    """The prompt and completion tokens of each answer, as a shard keeps them (JSON)."""
    return [[a.prompt_tokens, a.completion_tokens] for a in answers]


def prompts_of(spec: ModelSpec, release: Release, examples: list[dict[str, Any]]) -> list[str]:
    """Each example's prompt, with its shots (evaluation/runs/prompting.py)."""
    project = release.project
    prompting = Prompting.of(project, spec.prompt, spec.verbalizers)
    pool = shot_pool(spec, release)
    if project.is_free_text:
        shot_answer = first_answer
    else:
        shot_answer = lambda example: prompting.word_of[example["label"]]  # noqa: E731
    return contexts(spec, prompting, pool, examples, shot_answer)


def label_loglikelihoods(
    run: EvaluationRun,
    spec: ModelSpec,
    client: ServedModel,
    texts: list[str],
    words: list[str],
    advance: Advance,
) -> tuple[list[list[float]], list[Answer], dict[str, Any]]:
    """Each example's log-likelihood of each label's words, read by a rule the server gets
    right (evaluation/runners/served.py): the next token's top list where every label is one
    token (one request per example), else the echo, aligned or shifted; or the reason none
    holds. Also the Check's canaries, and how the run was scored."""
    report = server_report(client, loglikelihood=True, beat=lambda: advance(0))
    if not texts:
        return [], report.spent, {**report.as_dict(), "path": "none"}
    labels = Labels(run, spec, client, texts, words, report, advance)
    tokens = labels.tokens()
    if report.top and all(len(t) == 1 for t in tokens):
        lls, how = labels.by_next_token(tokens)
    elif report.echo in ("aligned", "shifted"):
        lls, how = labels.by_echo("echo" if report.echo == "aligned" else "echo-shifted")
    else:
        raise RunnerError(_no_reading(words, tokens, report))
    return lls, report.spent, {**report.as_dict(), **how}


@dataclass
class Labels:
    """A run's label log-likelihoods on its server: its prompts, labels and answers."""

    run: EvaluationRun
    spec: ModelSpec
    client: ServedModel
    texts: list[str]
    words: list[str]
    report: Report
    advance: Advance
    answers: dict[str, Answer] = field(default_factory=dict)

    @property
    def options(self) -> list[str]:
        return [self.spec.target_delimiter + word for word in self.words]

    def ask(self, asked: list[list[Request]], *, progress: bool = True) -> dict[str, Answer]:
        """`progress`: these requests finish examples (else they only keep the heartbeat)."""
        advance = self.advance if progress else lambda _: self.advance(0)
        self.answers |= ask(self.run, self.client, asked, advance)
        return self.answers

    def tokens(self) -> list[list[str]]:
        """The labels' tokens, as the server cuts them after the first prompt: from its echo,
        which is also the first example's answer where the echo is right."""
        read = "echo" if self.report.echo == "aligned" else "tokens"
        cut = [[echo_request(self.spec.source, self.texts[0], o, read=read)] for o in self.options]
        answers = self.ask(cut, progress=False)
        return [answers[r.key].value["tokens"] for (r,) in cut]

    def by_next_token(self, tokens: list[list[str]]) -> tuple[list[list[Any]], dict[str, Any]]:
        """Every label one token: one request per example, read from the next token's top
        list; an example whose list lacks a label is asked again by echo, where it is right."""
        asked = [[next_token_request(self.spec.source, text)] for text in self.texts]
        answers = self.ask(asked)
        lls = [[answers[r.key].value["top"].get(t[0]) for t in tokens] for (r,) in asked]
        missing = [n for n, row in enumerate(lls) if None in row]
        if missing and self.report.echo != "aligned":
            raise RunnerError(_outside(self.words, tokens, lls[missing[0]], self.report))
        again = {
            n: [echo_request(self.spec.source, self.texts[n], o) for o in self.options]
            for n in missing
        }
        answers = self.ask(list(again.values()), progress=False)
        for n, requests in again.items():
            lls[n] = [answers[r.key].value["ll"] for r in requests]
        return lls, {"path": "next", "fallback": len(missing)}

    def by_echo(self, read: str) -> tuple[list[list[Any]], dict[str, Any]]:
        asked = [
            [echo_request(self.spec.source, text, o, read=read) for o in self.options]
            for text in self.texts
        ]
        answers = self.ask(asked)
        return [[answers[r.key].value["ll"] for r in requests] for requests in asked], {
            "path": read
        }


def _no_reading(words: list[str], tokens: list[list[str]], report: Report) -> str:
    several = [w for w, t in zip(words, tokens, strict=True) if len(t) > 1]
    if several and report.notes:
        return (
            f"Labels cannot be scored by log-likelihood on this server: {report.notes[-1]} "
            f"The labels of several tokens: {', '.join(several)}."
        )
    return (
        "Labels cannot be scored by log-likelihood on this server: it gives neither the next "
        "token's top log-probabilities nor right ones of a prompt (echo)."
    )


def server_report(
    client: ServedModel, *, loglikelihood: bool, beat: Callable[[], None], chat: bool = False
) -> Report:
    """The Check (evaluation/runners/probe.py) before a run asks anything: its problems stop
    the run, with the reason. `beat`: the run's heartbeat, where a cancel stops it."""
    seconds = 3 * client.timeout
    report = probe(client, loglikelihood=loglikelihood, seconds=seconds, chat=chat, beat=beat)
    if report.problems:
        raise RunnerError(" ".join(report.problems))
    return report


def _outside(words: list[str], tokens: list[list[str]], row: list[Any], report: Report) -> str:
    word = next(w for w, value in zip(words, row, strict=True) if value is None)
    token = tokens[words.index(word)][0]
    return (
        f"The label {word!r} (its token {token!r}) is not among the {report.top} most likely "
        "next tokens this server lists after a prompt, and its log-probabilities of a "
        f"prompt (echo) are {report.echo}, so that label's log-likelihood cannot be read "
        "right: score by generation, or serve the model where echo is right (vLLM)."
    )


def ask(
    run: EvaluationRun, client: ServedModel, asked: list[list[Request]], advance: Advance
) -> dict[str, Answer]:
    """Every request's answer: those stored by an earlier attempt of this run, and the others
    from the server, each stored as it arrives. `advance` hears of examples as their last
    request is answered (and of none, every second or so while it waits: a cancel stops the
    run there)."""
    answers = stored_answers(run, {r.key for requests in asked for r in requests})
    waiting: dict[str, list[int]] = defaultdict(list)
    left = [0] * len(asked)
    for example, requests in enumerate(asked):
        for key in {r.key for r in requests} - set(answers):
            waiting[key].append(example)
            left[example] += 1
    advance(left.count(0))
    todo = {r.key: r for requests in asked for r in requests if r.key in waiting}
    notice = ""
    for group in client.answers(todo.values()):
        now = client.outage.notice()
        if now != notice:  # the run's page says it as it goes
            notice = now
            EvaluationRun.objects.filter(pk=run.pk).update(notice=notice)
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
    for its own), and, unless the run opts out, those an earlier run of the same model got to
    the same requests: copied to this run as reused, so that its retries and shards see them."""
    answers = {}
    ordered = sorted(keys)
    for start in range(0, len(ordered), 5000):
        for a in ServedAnswer.objects.filter(run=run, key__in=ordered[start : start + 5000]):
            answers[a.key] = Answer(a.value, a.prompt_tokens, a.completion_tokens, a.reused)
    missing = sorted(keys - set(answers))
    if not run.reuse_answers or not missing:
        return answers
    earlier: dict[str, ServedAnswer] = {}
    for start in range(0, len(missing), 5000):
        found = ServedAnswer.objects.filter(
            run__model_id=run.model_id, key__in=missing[start : start + 5000]
        ).exclude(run=run)
        for a in found.order_by("-run_id"):
            earlier.setdefault(a.key, a)
    ServedAnswer.objects.bulk_create(
        [ServedAnswer(run=run, key=key, value=a.value, reused=True) for key, a in earlier.items()],
        ignore_conflicts=True,
        batch_size=2000,
    )
    return answers | {key: Answer(a.value, reused=True) for key, a in earlier.items()}


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
    prompting: Prompting, examples: list[dict[str, Any]], outputs: list[str]
) -> list[dict[str, Any]]:
    """Prediction rows of the answers, each read as the label it names ("" for none: the
    task type counts those as `unparsed`)."""
    return [
        prediction_row(example, label=label_named(text, prompting.word_of), output=text)
        for example, text in zip(examples, outputs, strict=True)
    ]


def _cut(text: str, stop: list[str]) -> str:
    """The answer before the first stop sequence (a server may not apply them all)."""
    for sequence in stop:
        text = text.split(sequence)[0] if sequence else text
    return text.strip()
