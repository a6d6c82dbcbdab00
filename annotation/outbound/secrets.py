"""Secrets the product keeps to send with its requests (a served model's API key, a webhook's
signing secret), encrypted at rest: Fernet (AES-128-CBC with an HMAC) under a key derived
from MODEL_KEYS_SECRET (SECRET_KEY by default) and the secret's purpose, so that one kind of
secret never decrypts as another. Web and workers share the setting. A secret is never in
what a user reads, even where a server quotes it back (`scrub`)."""

import base64
import hashlib
import re

from cryptography.fernet import Fernet
from django.conf import settings


def fernet(purpose: str) -> Fernet:
    secret = settings.MODEL_KEYS_SECRET or settings.SECRET_KEY
    digest = hashlib.sha256(f"contrastlab.{purpose}:{secret}".encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def scrub(text: str, secret: str) -> str:
    """`text` without `secret`, any part of it of 8 characters or more, or a bearer token."""
    if secret:
        text = text.replace(secret, "[key]")
        for size in range(min(len(secret), 24), 7, -1):  # a key the server cut short
            for start in range(0, len(secret) - size + 1):
                text = text.replace(secret[start : start + size], "[key]")
    return re.sub(r"(?i)(bearer\s+|sk-)[\w.~+/=-]{4,}", r"\1[key]", text)
