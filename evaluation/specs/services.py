"""Registering a model spec: what kind scores which project, and who may make a worker load
what (docs/security.md)."""

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from annotation.errors import DomainError
from annotation.models import AuditLog, Project, user_or_none
from annotation.models.config import SPLITS
from annotation.prompting import clean_prompt, clean_verbalizers, prompt_fields
from evaluation.models import ModelSpec
from evaluation.runners.base import RunnerError
from evaluation.runners.probe import Report, probe
from evaluation.runners.served import ServedModel
from evaluation.specs import sources
from evaluation.specs.hosts import checked, clean_base_url, refusal
from evaluation.specs.secrets import decrypt, encrypt

Kind = ModelSpec.Kind
KINDS_FOR: dict[str, tuple[str, ...]] = {
    Project.TaskType.CLASSIFICATION: (
        Kind.HF_SEQUENCE_CLASSIFICATION,
        Kind.HF_CAUSAL_LM,
        Kind.HF_SEQ2SEQ,
        Kind.OPENAI_COMPATIBLE,
        Kind.PYTHON,
    ),
    Project.TaskType.MINIMAL_PAIR: (Kind.HF_CAUSAL_LM, Kind.HF_SEQ2SEQ),
    Project.TaskType.FREE_TEXT: (
        Kind.HF_QUESTION_ANSWERING,
        Kind.HF_CAUSAL_LM,
        Kind.HF_SEQ2SEQ,
        Kind.OPENAI_COMPATIBLE,
        Kind.PYTHON,
    ),
}
MAX_SHOTS = 32
CHECK_SECONDS = 10.0  # the Check holds a web worker no longer than about this
TRANSFORMERS = (
    Kind.HF_SEQUENCE_CLASSIFICATION,
    Kind.HF_CAUSAL_LM,
    Kind.HF_SEQ2SEQ,
    Kind.HF_QUESTION_ANSWERING,
)
HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}(/[A-Za-z0-9][\w.-]{0,95})?")


def model_register(*, project: Project, user: Any, **values: Any) -> ModelSpec:
    clean_label_mapping(project, values.get("label_mapping"))
    api_key = values.get("api_key") or ""
    if values["kind"] == Kind.OPENAI_COMPATIBLE:
        clean_served(user, values)
    else:
        values["source"] = clean_source(user, values["kind"], values["source"])
        values.pop("api_key", None)
        values["base_url"] = ""
    kinds = KINDS_FOR[project.task_type]
    if values["kind"] not in kinds:
        raise DomainError(
            f"A {project.task_type} project is scored by {_or(kinds)} models, "
            f"not {values['kind']}.",
            field="kind",
        )
    clean_prompting(project, values)
    if ModelSpec.objects.filter(project=project, name=values["name"]).exists():
        raise DomainError(f"A model named {values['name']!r} exists in this project.")
    if values["kind"] in TRANSFORMERS:  # last: the only checks that ask another machine
        check_source(values["source"])
    elif values["kind"] == Kind.OPENAI_COMPATIBLE:
        sources.check_server(values["base_url"], values["source"], api_key)
    trusted = user is None or bool(getattr(user, "is_staff", False))
    spec = ModelSpec.objects.create(
        project=project, created_by=user_or_none(user), trusted=trusted, **values
    )
    AuditLog.record(
        actor=user, action="model_registered", project=project, model=spec.pk, name=spec.name
    )
    return spec


def clean_served(user: Any, values: dict[str, Any]) -> None:
    """A served model (docs/models.md): a host the user may name, the served model's name as
    the server lists it, the key encrypted, and a scoring the endpoint can give."""
    staff = getattr(user, "is_staff", False)
    values["base_url"] = clean_base_url(values.get("base_url", ""), staff=staff)
    api_key = values.pop("api_key", "") or ""
    if not all(33 <= ord(c) < 127 for c in api_key):
        raise DomainError(
            "api_key is sent in an HTTP header: printable ASCII, without spaces.", field="api_key"
        )
    values["api_key_encrypted"] = encrypt(api_key)
    source = values["source"].strip()
    if not source or any(ord(c) < 32 for c in source):
        raise DomainError(
            "source must be the served model's name, as the server's /v1/models lists it.",
            field="source",
        )
    values["source"] = source
    if values.get("chat_template") and values.get("scoring") == ModelSpec.Scoring.LOGLIKELIHOOD:
        raise DomainError(
            "A chat endpoint gives no log-probabilities of a prompt: score labels by "
            "generation (scoring: generation), or leave chat_template off.",
            field="scoring",
        )
    for price in ("price_prompt", "price_completion"):
        if (values.get(price) or 0) < 0:
            raise DomainError(f"{price} cannot be negative.", field=price)


def _or(words: tuple[str, ...]) -> str:
    return " or ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)


def clean_prompting(project: Project, values: dict[str, Any]) -> None:
    """A language model's prompt, verbalizers, shots and stops (docs/prompting.md)."""
    try:
        clean_prompt(
            values.get("prompt", ""), prompt_fields(project.task_type, project.field_names)
        )
    except DomainError as error:
        raise DomainError(error.message, field="prompt") from None
    words = values.get("verbalizers") or {}
    try:  # the model's words over the project's: together, one word per label
        clean_verbalizers(words, project.labels)
        clean_verbalizers({**project.setting("verbalizers"), **words}, project.labels)
    except DomainError as error:
        raise DomainError(error.message, field="verbalizers") from None
    shots, split = values.get("few_shot", 0), values.get("few_shot_split", "")
    if not 0 <= shots <= MAX_SHOTS:
        raise DomainError(f"few_shot must be from 0 to {MAX_SHOTS}.", field="few_shot")
    if shots and split not in SPLITS:
        raise DomainError(
            f"few_shot_split must be one of {', '.join(SPLITS)} to draw shots from.",
            field="few_shot_split",
        )
    stop = values.get("stop", ["\n"])
    if not isinstance(stop, list) or not all(isinstance(s, str) and s for s in stop):
        raise DomainError("stop must be a list of non-empty texts.", field="stop")


def clean_label_mapping(project: Project, mapping: Any) -> None:
    mapping = mapping or {}
    if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
        raise DomainError("label_mapping must map model labels to project labels.")
    unknown = sorted(set(mapping.values()) - set(project.labels))
    if unknown:
        raise DomainError(
            f"label_mapping maps to {', '.join(unknown)}, which are not labels of this project "
            f"({', '.join(project.labels)})."
        )


def is_local_path(source: str) -> bool:
    """Whether `source` is written as a path (not whether one exists)."""
    return source.startswith(("/", ".", "~")) or "\\" in source or ".." in source.split("/")


def _inside_models_dir(source: str) -> Path | None:
    """The folder `source` names, symlinks followed, if it lies inside MODELS_DIR."""
    root = Path(settings.MODELS_DIR).resolve()
    folder = Path(source).expanduser().resolve()
    return folder if folder.is_relative_to(root) else None


def local_models() -> dict[str, Any]:
    """MODELS_DIR and the model folders in it (those with a config.json), for staff."""
    root = Path(settings.MODELS_DIR).resolve()
    found = root.glob("*/config.json") if root.is_dir() else []
    # A link to a folder elsewhere is not a model folder: nothing loads from outside the root.
    inside = [p.parent.name for p in found if p.parent.resolve().is_relative_to(root)]
    return {"root": root, "folders": sorted(inside)}


def _staff_folder(source: str) -> Path | None:
    """The folder a staff user's source names inside MODELS_DIR: a folder's name there that
    exists on this machine ("tiny-gpt2"), or a path, absolute or from the working directory,
    that resolves inside it (workers on other machines may hold folders this one lacks)."""
    root = Path(settings.MODELS_DIR).resolve()
    if "/" not in source and not is_local_path(source):
        named = (root / source).resolve()
        if (root / source).is_symlink() and not named.is_relative_to(root):
            raise DomainError(
                f"{source!r} in MODELS_DIR is a link to a folder outside it, and models load "
                "only from inside MODELS_DIR: copy the model's folder there instead.",
                field="source",
            )
        return named if named.is_relative_to(root) and named.is_dir() else None
    folder = Path(source).expanduser().resolve()
    return folder if folder.is_relative_to(root) else None


def clean_source(user: Any, kind: str, source: str) -> str:
    """The source to keep, or the rule that refuses it (docs/security.md): python callables
    and local model folders are code on the workers' disks, so only staff may name them, and
    local folders only inside MODELS_DIR (where staff name a folder by its name there). Anyone
    else names a model on the hub by its id; whether such an id also names a local folder is
    checked on the worker (source_to_load), so that the answer here tells a non-staff user
    nothing of the disk."""
    staff = getattr(user, "is_staff", False)
    if kind == ModelSpec.Kind.PYTHON:
        if not staff:
            raise DomainError(
                "Only staff may register python models: they run code on the workers.",
                code="forbidden",
                field="kind",
            )
        if ":" not in source:
            raise DomainError("A python model's source is package.module:callable.")
        return source
    folder = _staff_folder(source) if staff else None
    if folder is not None:
        return str(folder)
    if is_local_path(source) or source.count("/") > 1:
        if not staff:
            raise DomainError(
                "Only staff may register a model from a local path; give a hub id (org/name).",
                code="forbidden",
                field="source",
            )
        there = local_models()
        raise DomainError(
            f"{source!r} is not under MODELS_DIR ({there['root']}), the only place local "
            f"models load from; its model folders: {', '.join(there['folders']) or 'none'}.",
            field="source",
        )
    if not HUB_ID.fullmatch(source):
        raise DomainError(
            "source must be a hub id such as org/name (or, for staff, a folder of MODELS_DIR).",
            field="source",
        )
    return source


def check_source(source: str) -> None:
    """That a worker can find a transformers model's cleaned source (a folder of MODELS_DIR, or
    a hub id), within seconds (evaluation/specs/sources.py)."""
    if Path(source).is_absolute():
        sources.check_folder(Path(source))
    else:
        sources.check_hub_id(source)


def source_to_load(spec: ModelSpec) -> str:
    """What a worker may load for `spec`, checked again on the worker just before loading: a
    python callable or a local folder only if staff registered the spec (or an operator, from
    the command line: no user), a folder only inside MODELS_DIR with symlinks followed (it may
    have been swapped since registration), and a hub id only if it names no local path. The
    error names no path."""
    trusted = is_trusted(spec)
    if spec.kind == ModelSpec.Kind.PYTHON:
        if not trusted:
            raise RunnerError("Only staff may run python models; ask staff to register it.")
        return spec.source
    local = is_local_path(spec.source) or Path(spec.source).expanduser().exists()
    if not local:
        return spec.source
    if not trusted:
        raise not_loaded(spec)
    folder = _inside_models_dir(spec.source)
    if folder is None:
        raise RunnerError(
            f"Model {spec.name!r} cannot be loaded from its source: local models load from "
            "inside MODELS_DIR only (a link may have been swapped since registration)."
        )
    return str(folder)


def runner_options(spec: ModelSpec) -> dict[str, Any]:
    """What every torch runner loads a spec's model with (evaluation/runners/loading.py): its
    source as this worker may load it, its device and precision, and whether it may have
    random weights."""
    return {
        "source": source_to_load(spec),
        "device": spec.device,
        "precision": spec.precision,
        "allow_random": spec.allow_random_weights,
    }


def is_trusted(spec: ModelSpec) -> bool:
    """Registered by staff, or by an operator on the command line (no user): as recorded when
    it was registered, whatever became of its user since."""
    return spec.trusted


def not_loaded(spec: ModelSpec) -> RunnerError:
    """The one answer to an admin who is not staff when their model does not load, whatever is
    or is not on the worker's disk: it tells nothing of the disk (docs/security.md)."""
    return RunnerError(
        f"Model {spec.name!r} could not be loaded from the hub as {spec.source!r}; local "
        "folders and code are registered by staff."
    )


def served_client(spec: ModelSpec) -> ServedModel:
    """A client of a served model's server, as the worker and the Check send requests: the
    host checked again before each request where a user who is not staff named it (a name may
    resolve elsewhere later)."""
    check, address = None, None
    if not is_trusted(spec):
        host = urlsplit(spec.base_url).hostname or ""
        # Every request goes to the address checked now, whatever the name says later (a host
        # refused has none: the check before each request says why).
        address = checked(host).address

        def check() -> None:
            if problem := refusal(host):
                raise RunnerError(problem)

    return ServedModel(
        spec.base_url,
        spec.source,
        api_key=decrypt(spec.api_key_encrypted),
        concurrency=spec.concurrency,
        timeout=spec.timeout,
        retries=settings.SERVED_MODEL_RETRIES,
        backoff_max=settings.SERVED_MODEL_BACKOFF_MAX,
        max_bytes=settings.SERVED_MODEL_MAX_ANSWER_BYTES,
        check=check,
        address=address,
    )


def model_check(*, spec: ModelSpec) -> Report:
    """The Check of a served model (evaluation/runners/probe.py), within CHECK_SECONDS."""
    if spec.kind != Kind.OPENAI_COMPATIBLE:
        raise DomainError("Only served models are checked: other kinds load on a worker.")
    client = served_client(spec)
    loglikelihood = spec.scoring == ModelSpec.Scoring.LOGLIKELIHOOD
    try:
        return probe(client, loglikelihood=loglikelihood, seconds=CHECK_SECONDS)
    finally:
        client.line.close()
