"""Scoring a minimal-pair release with a language model (docs/metrics.md), on a worker.

Every released example is scored once. Pairs are formed within each contrast set: the member
labelled acceptable against each member labelled unacceptable (a pivot against its edits).
Where the project has a `source` field, the model's own output for that source is generated
once per set and scored like a text, for the distributional discrepancy.
"""

from typing import Any

from annotation.models import Release
from annotation.prompting import Prompting
from evaluation.models import ModelSpec
from evaluation.runners.lm import LanguageModelScorer
from evaluation.runs.scorer import Advance, prediction_row
from evaluation.runs.sources import runner_options

SEQ2SEQ = "hf-seq2seq"  # the kind's name (evaluation/runs/prompting.py, Seq2Seq)


def pair_rows(
    spec: ModelSpec, release: Release, examples: list[dict[str, Any]], advance: Advance
) -> list[dict[str, Any]]:
    """Each example's score, and on each set's original the model's own output and its score
    (the task type forms the pairs: evaluation/runs/task_types.py). The prompt over the
    source: the model's, else the project's, else the source on its line."""
    project = release.project
    scorer = LanguageModelScorer(
        **runner_options(spec),
        seq2seq=spec.kind == SEQ2SEQ,
        prompt=Prompting.of(project, spec.prompt).prompt,
    )
    advance(0)  # loading may take a while: show we are alive
    texts = [e["fields"]["text"] for e in examples]
    sources = [e["fields"].get("source") or None for e in examples]
    scores = scorer.score(texts, sources, spec.batch_size, advance)
    own = _own_outputs(scorer, spec, examples)
    return [
        prediction_row(
            e, score=score, **(own.get(e["set_id"], {}) if e["role"] == "original" else {})
        )
        for e, score in zip(examples, scores, strict=True)
    ]


def _own_outputs(
    scorer: LanguageModelScorer, spec: ModelSpec, examples: list[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """set id -> {"output", "output_score"}: ŷ for the set's source, once per set."""
    out: dict[str, dict[str, Any]] = {}
    for e in examples:
        source = e["fields"].get("source")
        if e["role"] != "original" or not source or e["set_id"] in out:
            continue
        text, key = scorer.generate(
            source, num_beams=spec.num_beams, max_new_tokens=spec.max_new_tokens
        )
        score = scorer.score_keys([key], 1)[key]
        out[e["set_id"]] = {"output": text, "output_score": score}
    return out
