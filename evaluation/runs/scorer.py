"""The one interface every kind of model implements (docs/models.md, "Adding a model kind"), as
lm-evaluation-harness's `LM` has every backend implement `loglikelihood` and `generate_until`.

A kind turns released examples into Prediction rows, one per example in their order, and says
nothing of metrics: the project's task type computes them from the rows
(evaluation/runs/task_types.py). Each kind is registered once, by its name, in
evaluation/runs/kinds.py.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evaluation.models import EvaluationRun

Advance = Callable[[int], None]  # told of the examples just finished (0: still alive)


@dataclass
class ScoredPart:
    """A kind's answer for some examples (a run's, or one shard's): their Prediction rows, and
    its `notes`, what it has to say of how it got them that no row holds (a server's reading,
    a file's missing ids), plain JSON: a shard keeps them until the merge, where `figures`
    turns every part's into the run's figures."""

    rows: list[dict[str, Any]]
    notes: dict[str, Any] = field(default_factory=dict)


class ModelKind:
    """A kind of model. `shardable`: whether its runs may be cut into shards, any part of
    which may be scored on any worker (a stored text cannot give back a python callable's
    spans; a predictions file is read whole)."""

    shardable = True

    def score(
        self, run: EvaluationRun, examples: list[dict[str, Any]], advance: Advance
    ) -> ScoredPart:
        """The rows of `examples` (all of the run's split, or one shard's part of it)."""
        raise NotImplementedError

    def figures(self, run: EvaluationRun, notes: list[dict[str, Any]]) -> dict[str, Any]:
        """The run's figures beside its task's metrics, from the notes of each of its parts
        (one for a run in one piece): by default the first's, and the model's precision."""
        return {**notes[0], "precision": run.model.precision}


def prediction_row(example: dict[str, Any], **values: Any) -> dict[str, Any]:
    """A Prediction's fields for one released example: which example, its set and role, its
    gold (a label, or the answers of a free-text project), and the model's `values`."""
    return {
        "example": example["id"],
        "set_id": example["set_id"],
        "role": example["role"],
        "gold": example.get("label") or "",
        "gold_answers": example.get("answers") or [],
        **values,
    }
