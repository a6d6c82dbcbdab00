"""Scoring a release with a served model (evaluation/runners/served.py, docs/models.md), on a
worker.

A served model is scored as a local language model is (evaluation/runs/prompting.py): the same
prompts and shots, through the same two calls, `loglikelihoods` and `generate`, so the figures
compare. `ServedLM` answers them from the server. Classification scores each label's words by
log-likelihood (`acc`, `acc_norm`), or, for a server that only answers in text, generates an
answer and reads the label it names (`label_named`); an answer that names none is "unparsed":
counted wrong, and counted on the run. Free text is generated and scored by the project's
answer rules.

Before it asks anything, a run asks the server its canaries (the Check,
evaluation/runners/probe.py): their problems stop the run. Every answer is stored as it
arrives (ServedAnswer), so that a run that is killed, cancelled or retried asks the server only
for what it has not answered yet.
"""

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from annotation.models import Project, Release
from annotation.prompting import Prompting
from evaluation.models import EvaluationRun, ModelSpec, ServedAnswer
from evaluation.runners.base import Progress, RunnerError
from evaluation.runners.completions import (
    Answer,
    Request,
    echo_request,
    generation_request,
    next_token_request,
)
from evaluation.runners.probe import Report, probe
from evaluation.runners.prompted import cut
from evaluation.runners.served import ServedModel
from evaluation.runs.endpoint import clean_served, served_client, usage_of
from evaluation.runs.prompting import choice_rows, generate, generated_rows
from evaluation.runs.scorer import PROMPTED, Advance, ModelKind, ScoredPart, prediction_row
from evaluation.runs.sources import check_server

Scoring = ModelSpec.Scoring
EDGES = " \t\r\n\"'`.,;:!?()[]{}*_"
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
        spec, release = run.model, run.release
        model = ServedLM(run, served_client(spec))
        EvaluationRun.objects.filter(pk=run.pk).update(notice="")
        try:
            if release.project.is_free_text:
                rows = generated_rows(spec, release, examples, model, advance)
            elif spec.scoring == Scoring.LOGLIKELIHOOD:
                rows = choice_rows(spec, release, examples, model, advance)
            else:
                rows = named_rows(spec, release, examples, model, advance)
            return ScoredPart(rows, model.notes)
        finally:
            model.client.line.close()
            # What the finished run (or the failed one) keeps of the server's outages.
            summary = model.client.outage.summary()
            EvaluationRun.objects.filter(pk=run.pk).update(notice=summary)

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


class ServedLM:
    """A served model answering a local language model's two calls (evaluation/runs/
    prompting.py's LM) for one run: the Check first, then every request the run has no answer
    to yet, each answer stored as it arrives. `notes`: how the server was read (`server`), and
    the tokens of the Check's canaries (`check`)."""

    def __init__(self, run: EvaluationRun, client: ServedModel):
        self.run, self.client, self.source = run, client, run.model.source
        self.chat = run.model.chat_template
        self.notes: dict[str, Any] = {}

    def loglikelihoods(
        self, contexts: Sequence[str], choices: Sequence[Sequence[str]], progress: Progress
    ) -> list[list[float]]:
        """Each choice's log-likelihood after its context, read by a rule the server gets
        right (evaluation/runners/completions.py): the next token's top list where every choice is
        one token (one request per context), else the echo, aligned or shifted; or the reason
        none holds."""
        report = self._checked(progress, loglikelihood=True)
        lls: list[list[Any]] = []
        how: dict[str, Any] = {"path": "none"}
        if contexts:
            tokens = self._tokens(contexts[0], choices, report, progress)
            if report.top and all(len(t) == 1 for t in tokens.values()):
                lls, how = self._by_next_token(contexts, choices, tokens, report, progress)
            elif report.echo in ("aligned", "shifted"):
                read = "echo" if report.echo == "aligned" else "echo-shifted"
                lls, how = self._by_echo(contexts, choices, read, progress), {"path": read}
            else:
                raise RunnerError(_no_reading(tokens, report))
        self.notes["server"] = {**report.as_dict(), **how}
        return lls

    def generate(
        self,
        contexts: Sequence[str],
        *,
        stop: Sequence[str],
        max_new_tokens: int,
        progress: Progress,
    ) -> list[str]:
        """Greedy continuations, through the chat endpoint (the context as one user message)
        where the spec asks for its chat template, cut before the first stop sequence (a server
        may not apply them all)."""
        self._checked(progress, loglikelihood=False)
        asked = [
            [
                generation_request(
                    self.source, context, chat=self.chat, max_tokens=max_new_tokens, stop=list(stop)
                )
            ]
            for context in contexts
        ]
        answers = ask(self.run, self.client, asked, progress)
        return [cut(answers[r.key].value["text"], stop) for (r,) in asked]

    def _checked(self, progress: Progress, *, loglikelihood: bool) -> Report:
        """The Check before the run asks anything: its problems stop the run, with the reason.
        progress(0) is the run's heartbeat, where a cancel stops it."""
        report = probe(
            self.client,
            loglikelihood=loglikelihood,
            seconds=3 * self.client.timeout,
            chat=self.chat and not loglikelihood,
            beat=lambda: progress(0),
        )
        if report.problems:
            raise RunnerError(" ".join(report.problems))
        self.notes["check"] = [[a.prompt_tokens, a.completion_tokens] for a in report.spent]
        return report

    def _tokens(
        self, context: str, choices: Sequence[Sequence[str]], report: Report, progress: Progress
    ) -> dict[str, list[str]]:
        """Each choice's tokens, as the server cuts them after the first context: from its
        echo, which is also the first example's answer where the echo is right."""
        read = "echo" if report.echo == "aligned" else "tokens"
        options = dict.fromkeys(option for row in choices for option in row)
        cuts = {o: echo_request(self.source, context, o, read=read) for o in options}
        answers = ask(self.run, self.client, [[r] for r in cuts.values()], _alive(progress))
        return {option: answers[r.key].value["tokens"] for option, r in cuts.items()}

    def _by_next_token(
        self,
        contexts: Sequence[str],
        choices: Sequence[Sequence[str]],
        tokens: dict[str, list[str]],
        report: Report,
        progress: Progress,
    ) -> tuple[list[list[Any]], dict[str, Any]]:
        """Every choice one token: one request per context, read from the next token's top
        list; a context whose list lacks a choice is asked again by echo, where it is right."""
        asked = [[next_token_request(self.source, context)] for context in contexts]
        answers = ask(self.run, self.client, asked, progress)
        lls = [
            [answers[r.key].value["top"].get(tokens[option][0]) for option in row]
            for (r,), row in zip(asked, choices, strict=True)
        ]
        missing = [n for n, row in enumerate(lls) if None in row]
        if missing and report.echo != "aligned":
            n = missing[0]
            raise RunnerError(_outside(choices[n], tokens, lls[n], report))
        again = {
            n: [echo_request(self.source, contexts[n], o) for o in choices[n]] for n in missing
        }
        answers = ask(self.run, self.client, list(again.values()), _alive(progress))
        for n, requests in again.items():
            lls[n] = [answers[r.key].value["ll"] for r in requests]
        return lls, {"path": "next", "fallback": len(missing)}

    def _by_echo(
        self,
        contexts: Sequence[str],
        choices: Sequence[Sequence[str]],
        read: str,
        progress: Progress,
    ) -> list[list[float]]:
        asked = [
            [echo_request(self.source, context, option, read=read) for option in row]
            for context, row in zip(contexts, choices, strict=True)
        ]
        answers = ask(self.run, self.client, asked, progress)
        return [[answers[r.key].value["ll"] for r in requests] for requests in asked]


def _alive(progress: Progress) -> Progress:
    """For requests that finish no example: they only keep the heartbeat."""
    return lambda _: progress(0)


def _no_reading(tokens: dict[str, list[str]], report: Report) -> str:
    several = [option.strip() for option, t in tokens.items() if len(t) > 1]
    if several and report.notes:
        return (
            f"Labels cannot be scored by log-likelihood on this server: {report.notes[-1]} "
            f"The labels of several tokens: {', '.join(several)}."
        )
    return (
        "Labels cannot be scored by log-likelihood on this server: it gives neither the next "
        "token's top log-probabilities nor right ones of a prompt (echo)."
    )


def _outside(
    options: Sequence[str], tokens: dict[str, list[str]], row: list[Any], report: Report
) -> str:
    option = next(o for o, value in zip(options, row, strict=True) if value is None)
    return (
        f"The label {option.strip()!r} (its token {tokens[option][0]!r}) is not among the "
        f"{report.top} most likely next tokens this server lists after a prompt, and its "
        f"log-probabilities of a prompt (echo) are {report.echo}, so that label's "
        "log-likelihood cannot be read right: score by generation, or serve the model where "
        "echo is right (vLLM)."
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


def named_rows(
    spec: ModelSpec,
    release: Release,
    examples: list[dict[str, Any]],
    model: ServedLM,
    advance: Advance,
) -> list[dict[str, Any]]:
    """A classification split answered by generation, each answer read as the label it
    names ("" for none: the task type counts those as `unparsed`)."""
    word_of = Prompting.of(release.project, spec.prompt, spec.verbalizers).word_of
    return [
        prediction_row(example, label=label_named(text, word_of), output=text)
        for example, text in zip(
            examples, generate(spec, release, examples, model, advance), strict=True
        )
    ]
