"""A served model's endpoint (docs/models.md, docs/security.md): the server it may name, its
key, the client that the worker and the Check send requests through, and what its answers cost.

Which servers: staff any; everyone else a host the operator allows in SERVED_MODEL_HOSTS, where
"*" allows any host whose addresses are all public (annotation/outbound/hosts.py, which webhooks
share). Checked when the model is registered, and again on the worker before each request,
since a name may resolve elsewhere later; the worker connects to the address its check found,
never to what the name resolves to a moment later (DNS rebinding).

The key is kept encrypted at rest (Fernet: AES-128-CBC with an HMAC) under a key derived from
MODEL_KEYS_SECRET (SECRET_KEY by default; annotation/outbound/secrets.py). Web and workers
share the setting; the key is decrypted only on a worker, for the run's requests, and is never
returned by the API, shown on a page, logged or written to a release."""

from typing import Any
from urllib.parse import urlsplit

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings

from annotation.errors import DomainError
from annotation.outbound import hosts
from annotation.outbound.secrets import fernet
from evaluation.models import ModelSpec
from evaluation.runners.base import RunnerError
from evaluation.runners.served import ServedModel


def clean_served(values: dict[str, Any], *, staff: bool, api_key: str) -> None:
    """A served model's values at registration (docs/models.md): a host the user may name, the
    served model's name as the server lists it, the key encrypted, and a scoring the endpoint
    can give."""
    values["base_url"] = clean_base_url(values.get("base_url", ""), staff=staff)
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


def clean_base_url(url: str, *, staff: bool) -> str:
    """The base URL to keep (without a trailing slash), or the rule that refuses it."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018  (a port out of range or not a number raises here)
    except ValueError:
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise DomainError(
            "base_url must be the server's http(s) address, such as http://host:8000/v1.",
            field="base_url",
        )
    if parts.username or parts.password or parts.query or parts.fragment:
        raise DomainError(
            "base_url holds only the scheme, host, port and path; give a key as api_key.",
            field="base_url",
        )
    if not staff and (problem := refusal(parts.hostname)):
        raise DomainError(problem, code="forbidden", field="base_url")
    return url.strip().rstrip("/")


def refusal(host: str) -> str:
    """Why a user who is not staff may not name `host` for a served model ("" if they may)."""
    return checked(host).problem


def checked(host: str) -> hosts.Checked:
    """The host rules' answer for `host`, with the public address to connect to where "*"
    allowed it (a name allowed by the operator is connected to by name)."""
    return hosts.check(
        host,
        allowed=settings.SERVED_MODEL_HOSTS,
        setting="SERVED_MODEL_HOSTS",
        what="served models",
    )


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


def served_client(spec: ModelSpec) -> ServedModel:
    """A client of a served model's server, as the worker and the Check send requests: the
    host checked again before each request where a user who is not staff named it (a name may
    resolve elsewhere later)."""
    check, address = None, None
    if not spec.trusted:  # registered by staff (runs/sources.py, is_trusted)
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


def usage_of(spec: ModelSpec, answers: Any) -> dict[str, Any]:
    """Requests and tokens of the run (the server's own counts), and their cost where the
    admin gave prices per million tokens; `reused`: the answers taken from earlier runs of
    the model, which cost nothing now."""
    answers = list(answers)
    asked = [a for a in answers if not a.reused]
    prompt = sum(a.prompt_tokens for a in asked)
    completion = sum(a.completion_tokens for a in asked)
    usage: dict[str, Any] = {
        "requests": len(asked),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "reused": len(answers) - len(asked),
    }
    if spec.price_prompt is not None or spec.price_completion is not None:
        cost = prompt * (spec.price_prompt or 0) + completion * (spec.price_completion or 0)
        usage["cost"] = round(cost / 1e6, 6)
    return usage
