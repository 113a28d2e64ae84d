"""Exceptions: one class per family of problem, each carrying the problem body.

::

    MdsError
    ├── TransportError            (no HTTP answer: connection refused, timeout)
    └── APIError                  (an HTTP error with an RFC 9457 problem body)
        ├── InvalidRequestError   400 invalid_parameter, unknown_parameter, invalid_cursor, ...
        ├── AuthenticationError   401 missing_api_key, invalid_api_key
        ├── NotFoundError         404 not_found
        ├── ExpiredError          410: a position older than the history kept
        │   ├── SyncTokenExpiredError 410 sync_token_expired
        │   └── EventsExpiredError    410 events_expired
        ├── RateLimitError        429 rate_limited, quota_exceeded (``retry_after``)
        │   └── TooManyStreamsError   429 too_many_streams
        ├── UnavailableError      503 unavailable (``retry_after``)
        └── ServerError           500 internal and other 5xx

No message, repr or attribute of these exceptions ever holds the API key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .models import ResponseMeta

__all__ = [
    "APIError",
    "AuthenticationError",
    "EventsExpiredError",
    "ExpiredError",
    "InvalidRequestError",
    "MdsError",
    "NotFoundError",
    "RateLimitError",
    "ServerError",
    "SyncTokenExpiredError",
    "TooManyStreamsError",
    "TransportError",
    "UnavailableError",
]


class MdsError(Exception):
    """Base of every exception this package raises."""


class TransportError(MdsError):
    """The request got no HTTP answer (connection refused, reset, timeout)."""


class APIError(MdsError):
    """An HTTP error answer, with its problem body's fields as attributes."""

    def __init__(
        self,
        *,
        status: int,
        code: str,
        detail: str,
        title: str | None = None,
        type: str | None = None,
        param: str | None = None,
        request_id: str | None = None,
        violated_policies: list[str] | None = None,
        retry_after: float | None = None,
        problem: Mapping[str, Any] | None = None,
        meta: ResponseMeta | None = None,
    ) -> None:
        self.status = status
        self.code = code
        self.detail = detail
        self.title = title
        self.type = type
        self.param = param
        self.request_id = request_id
        self.violated_policies = violated_policies
        self.retry_after = retry_after
        self.problem: dict[str, Any] = dict(problem or {})
        self.meta = meta or ResponseMeta(status=status, request_id=request_id)
        super().__init__(self._message())

    def _message(self) -> str:
        msg = f"{self.code} (HTTP {self.status}): {self.detail}"
        if self.param:
            msg += f" [param={self.param}]"
        if self.request_id:
            msg += f" [request_id={self.request_id}]"
        return msg

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status}, code={self.code!r}, "
            f"detail={self.detail!r}, param={self.param!r}, request_id={self.request_id!r})"
        )


class InvalidRequestError(APIError):
    """400: a bad, unknown or repeated parameter, a bad cursor, a key in the query."""


class AuthenticationError(APIError):
    """401: no key, or a key that is malformed, unknown, revoked or expired."""


class NotFoundError(APIError):
    """404: an unknown route, article slug or ISIN."""


class ExpiredError(APIError):
    """410: a position (a sync token, an event id) older than the history kept."""


class SyncTokenExpiredError(ExpiredError):
    """410 ``sync_token_expired``: the sync token is older than the change
    history; sync from scratch."""


class EventsExpiredError(ExpiredError):
    """410 ``events_expired``: the ``since`` event id is older than the event
    log keeps (30 days by default); read the current state again, then the
    log from its start."""


class RateLimitError(APIError):
    """429: the per-minute limit (``rate_limited``) or the monthly quota
    (``quota_exceeded``); ``retry_after`` is the server's ``Retry-After`` in seconds."""


class TooManyStreamsError(RateLimitError):
    """429 ``too_many_streams``: the key already holds the most event streams
    open at once (2); close one first (``violated_policies`` is ``["streams"]``)."""


class UnavailableError(APIError):
    """503: the store is unreachable or the request timed out; retry later."""


class ServerError(APIError):
    """500 (a bug on the server) and any other 5xx."""


_BY_STATUS: dict[int, type[APIError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    403: AuthenticationError,
    404: NotFoundError,
    410: ExpiredError,
    429: RateLimitError,
    503: UnavailableError,
}


# Codes whose class is narrower than their status's.
_BY_CODE: dict[tuple[int, str], type[APIError]] = {
    (410, "sync_token_expired"): SyncTokenExpiredError,
    (410, "events_expired"): EventsExpiredError,
    (429, "too_many_streams"): TooManyStreamsError,
}


def error_class(status: int, code: str | None = None) -> type[APIError]:
    """The exception class of a problem with this status and ``code``."""
    if (status, code or "") in _BY_CODE:
        return _BY_CODE[(status, code or "")]
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if status >= 500:
        return ServerError
    if 400 <= status < 500:
        return InvalidRequestError
    return APIError
