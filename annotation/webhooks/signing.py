"""A webhook's message signed as the Standard Webhooks specification says
(https://www.standardwebhooks.com, "Signature scheme"): the secret is "whsec_" and the base64
of its key; the signature is "v1," and the base64 of HMAC-SHA256 over
"{webhook-id}.{webhook-timestamp}.{body}", sent in webhook-signature beside the two. The secret
is kept encrypted (annotation/outbound/secrets.py) and shown once, when the webhook is made."""

import base64
import hashlib
import hmac
import secrets

from annotation.outbound.secrets import fernet

PREFIX = "whsec_"
KEY_BYTES = 32  # the specification asks for 24 to 64


def new_secret() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode()


def new_message_id() -> str:
    return f"msg_{secrets.token_hex(16)}"


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix(PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def signed_headers(secret: str, message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secret, message_id, timestamp, body),
    }


def seal(secret: str) -> str:
    return fernet("webhook-secrets").encrypt(secret.encode()).decode()


def unseal(stored: str) -> str:
    """The secret; raises cryptography's InvalidToken if the key it was sealed under changed."""
    return fernet("webhook-secrets").decrypt(stored.encode()).decode()
