"""Whether a worker can find a model's source, asked at registration (docs/models.md): a
mistyped hub id used to be accepted and fail about 49 s into its first run.

A folder of MODELS_DIR must hold a config.json. A hub id must be in this machine's Hugging Face
cache (where workers that share it load from), or the hub must say it exists, within
HUB_TIMEOUT seconds; where the hub is off (HF_HUB_OFFLINE) or does not answer, an id that is
not cached is refused, since a worker of this deployment could not download it either. No
model is loaded: the web process imports neither torch nor transformers.

A served model's server must answer its model list within HUB_TIMEOUT seconds, take the key,
and list the model's name, where it lists any."""

from pathlib import Path
from urllib.parse import urlsplit

from huggingface_hub import HfApi, constants, try_to_load_from_cache
from huggingface_hub.errors import HFValidationError, HTTPError, RepositoryNotFoundError

from annotation.errors import DomainError
from annotation.outbound.lines import Line
from evaluation.runners.probe import models_problem

HUB_TIMEOUT = 5.0  # seconds: the registration answers within seconds, whatever the network
LIST_BYTES = 1_000_000  # a model list larger than this is no server's honest answer


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
