"""Scoring classification and free-text releases with a prompted causal or seq2seq language
model (docs/prompting.md), on a worker.

Classification: each label is a choice, `target_delimiter + verbalizer`, after the rendered
prompt; the prediction is the choice with the highest log-likelihood (the task type reads
`acc`, and `acc_norm` per character of the verbalizer, from the rows: task_types.py), as
lm-evaluation-harness's multiple_choice tasks do. Free text: the greedy continuation of the
prompt, cut at the stop sequences, scored with EM, F1 and consistency as an extractive
reader's answer is. Minimal pairs: evaluation/runs/pairs.py.
"""

from collections.abc import Callable
from typing import Any

import numpy as np

from annotation.models import Project, Release
from annotation.prompting import Prompting
from annotation.releases.bundle import read_examples
from annotation.text.answers import answer_text
from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runners.base import RunnerError
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


def contexts(
    spec: ModelSpec,
    prompting: Prompting,
    pool: list[dict[str, Any]],
    examples: list[dict[str, Any]],
    answer: Any,
    chat: Any = None,
) -> list[str]:
    """Each example's context with the spec's shots from `pool`, in the model's chat template
    when asked. `answer(example)` is a shot's answer text."""
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


def load(spec: ModelSpec) -> PromptedModel:
    return PromptedModel(**runner_options(spec), seq2seq=spec.kind == SEQ2SEQ)


def choice_rows(
    spec: ModelSpec, release: Release, examples: list[dict[str, Any]], advance: Advance
) -> list[dict[str, Any]]:
    """A classification split scored by log-likelihood: each label's, and the highest's."""
    project = release.project
    prompting = Prompting.of(project, spec.prompt, spec.verbalizers)
    by_label, words = prompting.word_of, prompting.words
    pool = shot_pool(spec, release)
    model = load(spec)
    advance(0)  # loading may take a while: show we are alive
    chat = _chat(model) if spec.chat_template else None
    texts = contexts(spec, prompting, pool, examples, lambda e: by_label[e["label"]], chat)
    options = [spec.target_delimiter + word for word in words]
    lls = model.loglikelihoods(texts, [options] * len(texts), spec.batch_size, advance)
    return chosen_rows(project, examples, lls)


def chosen_rows(
    project: Any, examples: list[dict[str, Any]], lls: list[list[float]]
) -> list[dict[str, Any]]:
    """Each example's label by the highest log-likelihood of its choices, with every label's,
    as Prediction fields: for any model that scores choices, local or served."""
    rows = []
    for example, values in zip(examples, lls, strict=True):
        label = project.labels[int(np.argmax(values))]
        lls_by_label = dict(zip(project.labels, values, strict=True))
        rows.append(prediction_row(example, label=label, loglikelihoods=lls_by_label))
    return rows


def generated_rows(
    spec: ModelSpec, release: Release, examples: list[dict[str, Any]], advance: Advance
) -> list[dict[str, Any]]:
    """A free-text split answered by greedy generation."""
    project = release.project
    prompting = Prompting.of(project, spec.prompt, spec.verbalizers)
    pool = shot_pool(spec, release)
    model = load(spec)
    advance(0)
    chat = _chat(model) if spec.chat_template else None
    texts = contexts(spec, prompting, pool, examples, first_answer, chat)
    answers = model.generate(
        texts,
        stop=spec.stop or [],
        max_new_tokens=spec.max_new_tokens,
        batch_size=spec.batch_size,
        progress=advance,
    )
    return answer_rows(project, examples, [text.strip() for text in answers])


# What a language model does, by the project's task type.
BY_TASK_TYPE: dict[str, Callable[..., list[dict[str, Any]]]] = {
    Project.TaskType.CLASSIFICATION: choice_rows,
    Project.TaskType.FREE_TEXT: generated_rows,
    Project.TaskType.MINIMAL_PAIR: pair_rows,
}


class LanguageModel(Checkpoint):
    """A causal or seq2seq language model of transformers, prompted: a label by the
    log-likelihood of its words, an answer by greedy generation, a minimal pair by each
    text's score (evaluation/runs/pairs.py)."""

    task_types = tuple(BY_TASK_TYPE)
    settings = (*CHECKPOINT, *PROMPTED, "num_beams")

    def score(
        self, run: EvaluationRun, examples: list[dict[str, Any]], advance: Advance
    ) -> ScoredPart:
        rows_of = BY_TASK_TYPE[run.release.project.task_type]
        return ScoredPart(rows_of(run.model, run.release, examples, advance))


class CausalLM(LanguageModel):
    name, label = "hf-causal-lm", "causal language model (transformers)"


class Seq2Seq(LanguageModel):
    name, label = SEQ2SEQ, "sequence-to-sequence model (transformers)"


def first_answer(example: dict[str, Any]) -> str:
    return answer_text((example["answers"] or [""])[0])
