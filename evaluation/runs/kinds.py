"""Every kind of model, by the name it is registered under (ModelSpec.kind): the one table a
run is dispatched by. A new kind is a module with a ModelKind (evaluation/runs/scorer.py) and
a line here (docs/models.md, "Adding a model kind")."""

from evaluation.models import ModelSpec
from evaluation.runs.predictions import PredictionsFile
from evaluation.runs.prompting import LanguageModel
from evaluation.runs.scorer import ModelKind
from evaluation.runs.scoring import Classifier, PythonCallable, Reader
from evaluation.runs.served import Served

Kind = ModelSpec.Kind
KINDS: dict[str, ModelKind] = {
    Kind.HF_SEQUENCE_CLASSIFICATION: Classifier(),
    Kind.HF_QUESTION_ANSWERING: Reader(),
    Kind.HF_CAUSAL_LM: LanguageModel(),
    Kind.HF_SEQ2SEQ: LanguageModel(),
    Kind.OPENAI_COMPATIBLE: Served(),
    Kind.PYTHON: PythonCallable(),
    Kind.PREDICTIONS: PredictionsFile(),
}


def kind_of(spec: ModelSpec) -> ModelKind:
    return KINDS[spec.kind]
