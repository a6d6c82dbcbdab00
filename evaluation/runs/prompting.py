"""Scoring classification and free-text releases with a prompted causal or seq2seq language
model (docs/prompting.md), on a worker.

Classification: each label is a choice, `target_delimiter + verbalizer`, after the rendered
prompt; the prediction is the choice with the highest log-likelihood (the task type reads
`acc`, and `acc_norm` per character of the verbalizer, from the rows: task_types.py), as
lm-evaluation-harness's multiple_choice tasks do. Free text: the greedy continuation of the
prompt, cut at the stop sequences, scored with EM, F1 and consistency as an extractive
reader's answer is. Minimal pairs: evaluation/runs/pairs.py.
"""

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from annotation.models import Project, Release
from annotation.prompting import Prompting
from annotation.releases.bundle import read_examples
from annotation.text.answers import answer_text
from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runners.base import Progress, RunnerError
from evaluation.runners.prompted import PromptedModel
from evaluation.runs.pairs import SEQ2SEQ, pair_rows
from evaluation.runs.scorer import (
    CHECKPOINT,
    PROMPTED,
    Advance,
    Checkpoint,
    ScoredPart,
    prediction_row,
)
from evaluation.runs.scoring import answer_rows
from evaluation.runs.sources import runner_options


class LM(Protocol):
    """What a prompted model answers, local (evaluation/runners/prompted.py) or served
    (evaluation/runs/served.py), as lm-evaluation-harness has every backend answer
    `loglikelihood` and `generate_until`: one way to score, whatever answers."""

    def loglikelihoods(
        self, contexts: Sequence[str], choices: Sequence[Sequence[str]], progress: Progress
    ) -> list[list[float]]:
        """The log-likelihood of each choice after its example's context."""
        ...

    def generate(
        self,
        contexts: Sequence[str],
        *,
        stop: Sequence[str],
        max_new_tokens: int,
        progress: Progress,
    ) -> list[str]:
        """The greedy continuation of each context, cut before the first stop sequence."""
        ...


def prompts(
    spec: ModelSpec, release: Release, examples: list[dict[str, Any]], chat: Any = None
) -> list[str]:
    """Each example's prompt, with the spec's shots from the release's few-shot split (each
    answered by its label's words, or its first answer), in the model's chat template when
    `chat` wraps one."""
    pool = shot_pool(spec, release)
    project = release.project
    prompting = Prompting.of(project, spec.prompt, spec.verbalizers)
    if project.is_free_text:
        answer = first_answer
    else:
        answer = lambda example: prompting.word_of[example["label"]]  # noqa: E731
    texts = prompting.contexts(
        examples, answer, shots=spec.few_shot, pool=pool, delimiter=spec.target_delimiter
    )
    return [chat(text) for text in texts] if chat else texts


def shot_pool(spec: ModelSpec, release: Release) -> list[dict[str, Any]]:
    """The examples shots are drawn from: the release's few-shot split, read once."""
    if not spec.few_shot:
        return []
    pool = read_examples(release, spec.few_shot_split)
    if not pool:
        raise RunnerError(f"The release has no {spec.few_shot_split} examples for shots.")
    return pool


def choice_rows(
    spec: ModelSpec,
    release: Release,
    examples: list[dict[str, Any]],
    model: LM,
    advance: Advance,
    chat: Any = None,
) -> list[dict[str, Any]]:
    """A classification split scored by log-likelihood: each label's, and the highest's."""
    project = release.project
    words = Prompting.of(project, spec.prompt, spec.verbalizers).words
    texts = prompts(spec, release, examples, chat)
    options = [spec.target_delimiter + word for word in words]
    lls = model.loglikelihoods(texts, [options] * len(texts), advance)
    return chosen_rows(project, examples, lls)


def chosen_rows(
    project: Any, examples: list[dict[str, Any]], lls: list[list[float]]
) -> list[dict[str, Any]]:
    """Each example's label by the highest log-likelihood of its choices, with every label's,
    as Prediction fields."""
    rows = []
    for example, values in zip(examples, lls, strict=True):
        label = project.labels[int(np.argmax(values))]
        lls_by_label = dict(zip(project.labels, values, strict=True))
        rows.append(prediction_row(example, label=label, loglikelihoods=lls_by_label))
    return rows


def generated_rows(
    spec: ModelSpec,
    release: Release,
    examples: list[dict[str, Any]],
    model: LM,
    advance: Advance,
    chat: Any = None,
) -> list[dict[str, Any]]:
    """A free-text split answered by greedy generation."""
    answers = generate(spec, release, examples, model, advance, chat)
    return answer_rows(release.project, examples, answers)


def generate(
    spec: ModelSpec,
    release: Release,
    examples: list[dict[str, Any]],
    model: LM,
    advance: Advance,
    chat: Any = None,
) -> list[str]:
    """Each example's greedy answer to its prompt, cut at the spec's stop sequences."""
    texts = prompts(spec, release, examples, chat)
    stop, most = spec.stop or [], spec.max_new_tokens
    answers = model.generate(texts, stop=stop, max_new_tokens=most, progress=advance)
    return [text.strip() for text in answers]


def _chat(model: PromptedModel) -> Any:
    def wrap(text: str) -> str:
        try:
            return str(
                model.tokenizer.apply_chat_template(
                    [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
                )
            )
        except ValueError as error:  # the tokenizer has no template
            raise RunnerError(f"The model has no chat template: {error}") from None

    return wrap


class LanguageModel(Checkpoint):
    """A causal or seq2seq language model of transformers, prompted: a label by the
    log-likelihood of its words, an answer by greedy generation, a minimal pair by each
    text's score (evaluation/runs/pairs.py)."""

    task_types = (
        Project.TaskType.CLASSIFICATION,
        Project.TaskType.FREE_TEXT,
        Project.TaskType.MINIMAL_PAIR,
    )
    settings = (*CHECKPOINT, *PROMPTED, "num_beams")

    def score(
        self, run: EvaluationRun, examples: list[dict[str, Any]], advance: Advance
    ) -> ScoredPart:
        spec, release = run.model, run.release
        project = release.project
        if project.task_type == Project.TaskType.MINIMAL_PAIR:
            return ScoredPart(pair_rows(spec, release, examples, advance))
        seq2seq = spec.kind == SEQ2SEQ
        model = PromptedModel(**runner_options(spec), seq2seq=seq2seq, batch_size=spec.batch_size)
        advance(0)  # loading may take a while: show we are alive
        chat = _chat(model) if spec.chat_template else None
        rows_of = generated_rows if project.is_free_text else choice_rows
        return ScoredPart(rows_of(spec, release, examples, model, advance, chat))


class CausalLM(LanguageModel):
    name, label = "hf-causal-lm", "causal language model (transformers)"


class Seq2Seq(LanguageModel):
    name, label = SEQ2SEQ, "sequence-to-sequence model (transformers)"


def first_answer(example: dict[str, Any]) -> str:
    return answer_text((example["answers"] or [""])[0])
