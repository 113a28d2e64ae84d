"""``verify_webhook``: checks a delivery signed by the Standard Webhooks scheme
(contract 11.2) with the standard library alone.

The signature is ``v1,`` + base64 of HMAC-SHA256 over
``"{webhook-id}.{webhook-timestamp}.{body}"``, keyed by the secret's
base64-decoded bytes (``whsec_`` + base64). While a secret is being rotated
the header holds two signatures, space-separated; one match is enough. A
timestamp more than 5 minutes from now is refused, so a captured delivery
cannot be replayed later."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .errors import MdsError

__all__ = ["TOLERANCE", "WebhookVerificationError", "verify_webhook"]

PREFIX = "whsec_"

TOLERANCE = 300.0
"""Seconds a delivery's timestamp may be off from now, either way."""


class WebhookVerificationError(MdsError):
    """A delivery was not verified: a header is missing or malformed, the
    timestamp is off, or no signature matches. Answer it with a ``4xx``."""


def verify_webhook(
    secret: str,
    headers: Mapping[str, Any],
    body: bytes | str,
    *,
    tolerance: float = TOLERANCE,
    now: float | datetime | None = None,
) -> Any:
    """Verify a webhook delivery and return its parsed JSON body (the event:
    ``Event.from_json`` types it).

    ``secret`` is the endpoint's (``whsec_…``); ``headers`` the request's, any
    mapping (names in any case; a list value is joined); ``body`` exactly as
    received (the raw bytes, not a parsed and re-serialised object).
    ``now`` (Unix seconds or an aware datetime) is for tests; the default is
    the clock. Raises :class:`WebhookVerificationError` when it cannot be
    trusted."""
    key = _base64(secret[len(PREFIX) :] if secret.startswith(PREFIX) else secret)
    if not key:
        raise WebhookVerificationError("the secret is not `whsec_` followed by base64")
    msg_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not re.fullmatch(r"\d{1,15}", timestamp):
        raise WebhookVerificationError("webhook-timestamp is not Unix seconds")

    clock = time.time() if now is None else now.timestamp() if isinstance(now, datetime) else now
    skew = int(timestamp) - clock
    if skew < -tolerance:
        raise WebhookVerificationError("webhook-timestamp is too old")
    if skew > tolerance:
        raise WebhookVerificationError("webhook-timestamp is in the future")

    payload = body.encode() if isinstance(body, str) else bytes(body)
    signed = f"{msg_id}.{timestamp}.".encode() + payload
    expected = hmac.new(key, signed, hashlib.sha256).digest()
    if not any(
        secrets.compare_digest(signature, expected) for signature in _v1_signatures(signatures)
    ):
        raise WebhookVerificationError("no signature matches")
    try:
        return json.loads(payload)
    except ValueError:
        raise WebhookVerificationError("the body is signed but is not JSON") from None


def _header(headers: Mapping[str, Any], name: str) -> str:
    """The value of header ``name`` (any case); raises when it is absent or empty."""
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if str(k).lower() == name), None)
    if isinstance(value, list | tuple):
        value = " ".join(str(v) for v in value)
    if not value:
        raise WebhookVerificationError(f"missing {name} header")
    return str(value)


def _v1_signatures(header: str) -> list[bytes]:
    """The ``v1`` signatures of a ``webhook-signature`` header (others skipped)."""
    out = []
    for entry in header.split(" "):
        version, comma, encoded = entry.partition(",")
        raw = _base64(encoded) if comma and version == "v1" else None
        if raw is not None and len(raw) == hashlib.sha256().digest_size:
            out.append(raw)
    return out


def _base64(text: str) -> bytes | None:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
