"""The one interface every kind of model implements (docs/models.md, "Adding a model kind"), as
lm-evaluation-harness's `LM` has every backend implement `loglikelihood` and `generate_until`.

A kind says what it is (its name, label, the task types it scores, the settings it reads, who
may register it), cleans a spec's values at registration, and turns released examples into
Prediction rows, one per example in their order; it says nothing of metrics: the project's
task type computes them from the rows (evaluation/runs/task_types.py). Each kind is registered
once, in evaluation/runs/kinds.py: the Models page, the API, registration and runs all read it
there.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from annotation.errors import DomainError
from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runners.probe import Report
from evaluation.runs.sources import check_source, clean_source

Advance = Callable[[int], None]  # told of the examples just finished (0: still alive)


@dataclass
class ScoredPart:
    """A kind's answer for some examples (a run's, or one shard's): their Prediction rows, and
    its `notes`, what it has to say of how it got them that no row holds (a server's reading,
    a file's missing ids), plain JSON: a shard keeps them until the merge, where `figures`
    turns every part's into the run's figures."""

    rows: list[dict[str, Any]]
    notes: dict[str, Any] = field(default_factory=dict)


# Settings (evaluation/specs/fields.py) that several kinds read.
CHECKPOINT: tuple[str, ...] = (
    "max_length",
    "batch_size",
    "device",
    "precision",
    "allow_random_weights",
)
PROMPTED: tuple[str, ...] = (
    "prompt",
    "verbalizers",
    "target_delimiter",
    "few_shot",
    "few_shot_split",
    "chat_template",
    "stop",
    "max_new_tokens",
)


class ModelKind:
    """A kind of model. `name`: a spec's `kind`; `label`: the Models page's; `task_types`: the
    projects it may score; `settings`: the spec's fields it reads besides name, kind and source
    (the page shows those alone); `staff_only`: it runs code on the workers, so only staff may
    register it (docs/security.md); `on_page`: registered on the Models page and the API (a
    predictions file is registered by its upload); `shardable`: its runs may be cut into
    shards, any part of which may be scored on any worker (a stored text cannot give back a
    python callable's spans; a predictions file is read whole)."""

    name: str
    label: str
    task_types: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()
    staff_only = False
    on_page = True
    shardable = True

    def clean(self, values: dict[str, Any], *, staff: bool, api_key: str) -> None:
        """A spec's values at registration, cleaned in place, or the rule that refuses them:
        by default a model that a worker loads names no server."""
        values["base_url"] = ""

    def check(self, values: dict[str, Any], api_key: str) -> None:
        """What registration asks another machine, last and within seconds (by default
        nothing)."""

    def probe(self, spec: ModelSpec) -> Report:
        """The Check on the Models page (served models alone have one)."""
        raise DomainError("Only served models are checked: other kinds load on a worker.")

    def score(
        self, run: EvaluationRun, examples: list[dict[str, Any]], advance: Advance
    ) -> ScoredPart:
        """The rows of `examples` (all of the run's split, or one shard's part of it)."""
        raise NotImplementedError

    def figures(self, run: EvaluationRun, notes: list[dict[str, Any]]) -> dict[str, Any]:
        """The run's figures beside its task's metrics, from the notes of each of its parts
        (one for a run in one piece): by default the first's, and the model's precision."""
        return {**notes[0], "precision": run.model.precision}


class Checkpoint(ModelKind):
    """A transformers model that a worker loads: a hub id, or (staff) a folder of MODELS_DIR,
    found at registration (evaluation/runs/sources.py)."""

    settings: tuple[str, ...] = CHECKPOINT

    def clean(self, values: dict[str, Any], *, staff: bool, api_key: str) -> None:
        super().clean(values, staff=staff, api_key=api_key)
        values["source"] = clean_source(values["source"], staff=staff)

    def check(self, values: dict[str, Any], api_key: str) -> None:
        check_source(values["source"])


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
