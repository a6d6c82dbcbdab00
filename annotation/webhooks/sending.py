"""One attempt of a delivery on the wire: the body signed afresh with this attempt's timestamp
(annotation/webhooks/signing.py), posted through the product's one outbound line
(annotation/outbound/lines.py): a deadline for the whole answer (WEBHOOK_TIMEOUT), a cap on
the answer's size (WEBHOOK_MAX_ANSWER_BYTES), and no redirect followed (a 3xx is a failed
attempt, as every answer but a 2xx)."""

import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson
from django.conf import settings

from annotation.models.webhooks import EXCERPT_CHARS
from annotation.outbound.lines import Line, Refused, Unanswered
from annotation.webhooks.signing import signed_headers


@dataclass(frozen=True)
class Answer:
    status_code: int | None  # None: no answer came
    body_excerpt: str
    error: str

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def post(
    url: str, *, secret: str, message_id: str, payload: dict[str, Any], address: str | None = None
) -> Answer:
    """One signed POST of `payload` to `url` (at `address`, when given: the one checked)."""
    body = orjson.dumps(payload)
    headers = {
        **signed_headers(secret, message_id, int(time.time()), body),
        "User-Agent": "ContrastLab-Webhooks",
    }
    parts = urlsplit(url)
    base = f"{parts.scheme}://{parts.netloc}"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    line = Line(
        base,
        headers=headers,
        deadline=settings.WEBHOOK_TIMEOUT,
        max_bytes=settings.WEBHOOK_MAX_ANSWER_BYTES,
        reader="a webhook's receiver (WEBHOOK_MAX_ANSWER_BYTES)",
        address=address,
    )
    try:
        reply = line.exchange("POST", path, body)
    except (Unanswered, Refused) as error:
        return Answer(None, "", str(error)[:EXCERPT_CHARS])
    finally:
        line.close()
    excerpt = reply.body[: EXCERPT_CHARS * 4].decode(errors="replace")[:EXCERPT_CHARS]
    return Answer(reply.status, excerpt, "")
