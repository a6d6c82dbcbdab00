"""Every kind of model, registered once: the one list that runs are dispatched by and that the
Models page, the API and registration read (names, labels, task types, settings, who may
register it). A new kind is a module with a ModelKind (evaluation/runs/scorer.py) and a line
here (docs/models.md, "Adding a model kind")."""

from evaluation.models import ModelSpec
from evaluation.runs.predictions import PredictionsFile
from evaluation.runs.prompting import CausalLM, Seq2Seq
from evaluation.runs.scorer import ModelKind
from evaluation.runs.scoring import Classifier, PythonCallable, Reader
from evaluation.runs.served import Served

KINDS: dict[str, ModelKind] = {
    kind.name: kind
    for kind in (
        Classifier(),
        Reader(),
        CausalLM(),
        Seq2Seq(),
        Served(),
        PythonCallable(),
        PredictionsFile(),
    )
}
# The API schema's ModelKindEnum (config/settings/base.py).
KIND_CHOICES = [(kind.name, kind.label) for kind in KINDS.values()]


def kind_of(spec: ModelSpec) -> ModelKind:
    return KINDS[spec.kind]


def kinds_for(task_type: str) -> list[str]:
    """The kinds that may score a project of `task_type`, in the registry's order."""
    return [name for name, kind in KINDS.items() if task_type in kind.task_types]
