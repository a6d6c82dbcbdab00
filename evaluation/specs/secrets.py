"""A served model's API key, kept encrypted at rest (Fernet: AES-128-CBC with an HMAC) under a
key derived from MODEL_KEYS_SECRET (SECRET_KEY by default; annotation/outbound/secrets.py).
Web and workers share the setting; the key is decrypted only on a worker, for the run's
requests, and is never returned by the API, shown on a page, logged or written to a release
(docs/models.md)."""

from cryptography.fernet import Fernet, InvalidToken

from annotation.outbound.secrets import fernet
from evaluation.runners.base import RunnerError


def _fernet() -> Fernet:
    return fernet("model-keys")


def encrypt(api_key: str) -> str:
    return _fernet().encrypt(api_key.encode()).decode() if api_key else ""


def decrypt(stored: str) -> str:
    if not stored:
        return ""
    try:
        return _fernet().decrypt(stored.encode()).decode()
    except InvalidToken:
        raise RunnerError(
            "The model's API key cannot be read: MODEL_KEYS_SECRET (or SECRET_KEY) changed "
            "since it was saved. Register the model again with its key (under a new name), or "
            "restore the setting."
        ) from None
