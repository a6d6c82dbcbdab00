"""A model's source: which one a user may name, whether a worker can find it, and what a
worker may load (docs/models.md, docs/security.md).

Whether a worker can find it is asked at registration: a mistyped hub id used to be accepted
and fail about 49 s into its first run.

A folder of MODELS_DIR must hold a config.json. A hub id must be in this machine's Hugging Face
cache (where workers that share it load from), or the hub must say it exists, within
HUB_TIMEOUT seconds; where the hub is off (HF_HUB_OFFLINE) or does not answer, an id that is
not cached is refused, since a worker of this deployment could not download it either. No
model is loaded: the web process imports neither torch nor transformers.

A served model's server must answer its model list within HUB_TIMEOUT seconds, take the key,
and list the model's name, where it lists any."""

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from huggingface_hub import HfApi, constants, try_to_load_from_cache
from huggingface_hub.errors import HFValidationError, HTTPError, RepositoryNotFoundError

from annotation.errors import DomainError
from annotation.outbound.lines import Line
from evaluation.models import ModelSpec
from evaluation.runners.base import RunnerError
from evaluation.runners.probe import models_problem

HUB_TIMEOUT = 5.0  # seconds: the registration answers within seconds, whatever the network
LIST_BYTES = 1_000_000  # a model list larger than this is no server's honest answer
HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}(/[A-Za-z0-9][\w.-]{0,95})?")


def check_folder(folder: Path) -> None:
    """A local model folder: transformers loads nothing from a folder without config.json."""
    if not (folder / "config.json").is_file():
        raise DomainError(
            f"{folder.name!r} in MODELS_DIR holds no config.json on this machine, so a worker "
            "cannot load a model from it: copy the model's folder (as save_pretrained writes "
            "it) there first.",
            field="source",
        )


def check_hub_id(repo_id: str) -> None:
    """A hub id: in the local cache, else known to the hub; else refused with the reason."""
    try:
        if isinstance(try_to_load_from_cache(repo_id, "config.json"), str):
            return
    except HFValidationError:
        raise DomainError(f"{repo_id!r} is not a valid hub id.", field="source") from None
    where = "this machine's Hugging Face cache"
    if constants.HF_HUB_OFFLINE:
        raise DomainError(
            f"{repo_id!r} is not in {where}, and the hub is switched off here "
            "(HF_HUB_OFFLINE), so no worker can load it. Check the id's spelling, or download "
            "the model into the cache (or MODELS_DIR) first.",
            field="source",
        )
    try:
        HfApi().model_info(repo_id, timeout=HUB_TIMEOUT)
    except RepositoryNotFoundError:
        raise DomainError(
            f"The hub has no model {repo_id!r} (or it is private), and it is not in {where}: "
            "check the id's spelling.",
            field="source",
        ) from None
    except (HTTPError, OSError) as error:
        raise DomainError(
            f"{repo_id!r} is not in {where}, and the hub did not answer within "
            f"{HUB_TIMEOUT:.0f} s ({error.__class__.__name__}), so a worker could not download "
            "it either. Download the model into the cache (or MODELS_DIR) first.",
            field="source",
        ) from None


def check_server(base_url: str, source: str, api_key: str) -> None:
    """A served model: its server answers GET /models within HUB_TIMEOUT seconds in all (the
    web worker is held no longer, however slowly the server sends), takes the key, and serves
    `source` (a server that keeps no list is taken at its word)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    line = Line(base_url, headers=headers, deadline=HUB_TIMEOUT, max_bytes=LIST_BYTES)
    host = urlsplit(base_url).netloc
    try:
        field, problem = models_problem(line.exchange, source, host, deadline=HUB_TIMEOUT)
    finally:
        line.close()
    if problem:
        raise DomainError(problem, field=field)


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


def clean_source(source: str, *, staff: bool) -> str:
    """A transformers model's source to keep, or the rule that refuses it (docs/security.md):
    local model folders are code on the workers' disks, so only staff may name them, and only
    inside MODELS_DIR (where staff name a folder by its name there). Anyone else names a model
    on the hub by its id; whether such an id also names a local folder is checked on the worker
    (source_to_load), so that the answer here tells a non-staff user nothing of the disk."""
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
    a hub id), within seconds."""
    if Path(source).is_absolute():
        check_folder(Path(source))
    else:
        check_hub_id(source)


def source_to_load(spec: ModelSpec) -> str:
    """What a worker may load for a transformers `spec`, checked again on the worker just
    before loading: a local folder only if staff registered the spec (or an operator, from the
    command line: no user), only inside MODELS_DIR with symlinks followed (it may have been
    swapped since registration), and a hub id only if it names no local path. The error names
    no path."""
    trusted = is_trusted(spec)
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
