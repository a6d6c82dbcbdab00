"""Secrets the product keeps to send with its requests (a served model's API key, a webhook's
signing secret), encrypted at rest: Fernet (AES-128-CBC with an HMAC) under a key derived
from MODEL_KEYS_SECRET (SECRET_KEY by default) and the secret's purpose, so that one kind of
secret never decrypts as another. Web and workers share the setting."""

import base64
import hashlib

from cryptography.fernet import Fernet
from django.conf import settings


def fernet(purpose: str) -> Fernet:
    secret = settings.MODEL_KEYS_SECRET or settings.SECRET_KEY
    digest = hashlib.sha256(f"contrastlab.{purpose}:{secret}".encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))
