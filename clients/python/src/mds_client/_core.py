"""What the sync and async clients share: configuration, retries, decoding."""

from __future__ import annotations

import logging
import os
import random
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import httpx

from .errors import APIError, TransportError, error_class
from .models import ResponseMeta

__version__ = "0.1.0"

log = logging.getLogger("mds_client")

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
RETRY_STATUSES = frozenset({429, 503})
#: Methods whose call, once sent, may have changed something (a new endpoint,
#: a rotated secret, a ping): tried again only when the service surely did
#: not act on it, a ``429`` (refused before any work) or no connection made.
#: ``PATCH`` and ``DELETE`` set a state, so repeating one is harmless.
ONCE_METHODS = frozenset({"POST"})
#: Failures that happen before a request is sent.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout)

TR = TypeVar("TR")


class Secret:
    """The API key, wrapped so no repr, traceback or log shows it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__


@dataclass(frozen=True)
class RetryPolicy:
    """How ``429`` and ``503`` answers (and connection failures) are retried.

    - ``max_retries``: retries after the first attempt (0 turns retrying off).
    - A ``Retry-After`` header is honoured: the wait is that many seconds plus
      up to ``jitter`` of it again (so clients that were refused together do
      not come back together). A ``Retry-After`` longer than ``max_delay``
      (a monthly quota used up) is not waited for: the error is raised at once.
    - Without ``Retry-After``: exponential backoff from ``backoff`` seconds,
      full jitter, capped at ``max_delay``.
    """

    max_retries: int = 3
    backoff: float = 0.5
    max_delay: float = 60.0
    jitter: float = 0.1

    def delay(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait before retry number ``attempt`` (1-based), or None to give up."""
        if attempt > self.max_retries:
            return None
        if retry_after is not None:
            if retry_after > self.max_delay:
                return None
            return min(retry_after * (1.0 + random.uniform(0.0, self.jitter)), self.max_delay)
        ceiling = min(self.backoff * (2 ** (attempt - 1)), self.max_delay)
        return random.uniform(ceiling / 2, ceiling)


class ClientBase(Generic[TR]):
    """What :class:`Client` and :class:`AsyncClient` share: their arguments (see
    :class:`Client`), the key, the base URL and the retry policy. Each opens its
    own httpx client (``TR``: the transport it takes) in ``_open``."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        transport: TR | None = None,
    ) -> None:
        self._api_key, self.base_url = resolve_config(api_key, base_url)
        self.retry = retry or RetryPolicy()
        options = {"base_url": self.base_url, "headers": headers_for(self._api_key)}
        self._open({**options, "timeout": timeout, "transport": transport})

    def _open(self, options: dict[str, Any]) -> None:
        """Opens the httpx client with ``options`` and the resources that use it."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, api_key='***')"

    __str__ = __repr__


def resolve_config(api_key: str | None, base_url: str | None) -> tuple[Secret, str]:
    key = api_key if api_key is not None else os.environ.get("MDS_API_KEY")
    if not key:
        raise ValueError("no API key: pass api_key=... or set MDS_API_KEY")
    url = base_url or os.environ.get("MDS_BASE_URL") or DEFAULT_BASE_URL
    return Secret(key.strip()), url.rstrip("/")


def headers_for(api_key: Secret) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {api_key.reveal()}",
        "Accept": "application/json",
        "User-Agent": f"mds-client-python/{__version__}",
    }


def retry_after_of(response: httpx.Response) -> float | None:
    raw = response.headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(float(raw.strip()), 0.0)
    except ValueError:
        return None


def scrub(text: str, api_key: Secret) -> str:
    """Belt and braces: never let the key into a message, whatever the server says."""
    key = api_key.reveal()
    return text.replace(key, "mds_***") if key and key in text else text


def decode(response: httpx.Response, api_key: Secret) -> tuple[dict[str, Any], ResponseMeta]:
    """The JSON body and meta of a successful response; raise the typed error otherwise."""
    meta = ResponseMeta.from_response(response)
    if response.status_code >= 400:
        raise to_error(response, meta, api_key)
    if response.status_code == 204:
        return {}, meta
    body = response.json()
    if not isinstance(body, dict):
        raise unexpected(meta, "unexpected_body", "the response body is not a JSON object")
    return body, meta


def unexpected(meta: ResponseMeta, code: str, detail: str) -> APIError:
    """The error of an answer (``meta``) that is no error, yet not one the
    client can use: ``code`` and ``detail`` say how."""
    return APIError(
        status=meta.status,
        code=code,
        detail=detail,
        request_id=meta.request_id,
        meta=meta,
    )


def to_error(response: httpx.Response, meta: ResponseMeta, api_key: Secret) -> APIError:
    status = response.status_code
    problem: dict[str, Any] = {}
    try:
        parsed = response.json()
        if isinstance(parsed, dict):
            problem = parsed
    except ValueError:
        pass
    code = str(problem.get("code") or f"http_{status}")
    detail = scrub(str(problem.get("detail") or response.reason_phrase or "error"), api_key)
    request_id = problem.get("request_id") or meta.request_id
    policies = problem.get("violated_policies")
    cls = error_class(status, code)
    return cls(
        status=status,
        code=code,
        detail=detail,
        title=problem.get("title"),
        type=problem.get("type"),
        param=problem.get("param"),
        request_id=str(request_id) if request_id is not None else None,
        violated_policies=[str(p) for p in policies] if isinstance(policies, list) else None,
        retry_after=retry_after_of(response),
        problem={k: (scrub(v, api_key) if isinstance(v, str) else v) for k, v in problem.items()},
        meta=meta,
    )


class Attempts:
    """The retry state of one call: after each failure or retryable answer, how
    long to wait before trying again, or that it is time to give up."""

    def __init__(
        self, policy: RetryPolicy, api_key: Secret, path: str, method: str = "GET"
    ) -> None:
        self._policy = policy
        self._api_key = api_key
        self._path = path
        self._method = method
        self._attempt = 0

    def after_failure(self, exc: httpx.TransportError) -> float:
        """The wait after no answer at all; raises :class:`TransportError` when out of
        retries, or when the request may have reached the service and its method is
        not one to repeat (``POST``)."""
        why = type(exc).__name__
        once = self._method in ONCE_METHODS and not isinstance(exc, NOT_SENT)
        delay = None if once else self._next(None)
        if delay is None:
            unsure = " (not retried: the service may have acted on it)" if once else ""
            raise TransportError(
                f"{self._method} {self._path} failed: {why}: "
                + scrub(str(exc), self._api_key)
                + unsure
            ) from None
        self._log(why, delay)
        return delay

    def after_answer(self, response: httpx.Response) -> float | None:
        """The wait before retrying this answer, or ``None`` when it is the final one
        (for a ``POST``, every answer but ``429`` is)."""
        if response.status_code not in RETRY_STATUSES:
            return None
        if self._method in ONCE_METHODS and response.status_code != 429:
            return None
        delay = self._next(retry_after_of(response))
        if delay is not None:
            self._log(str(response.status_code), delay)
        return delay

    def _next(self, retry_after: float | None) -> float | None:
        self._attempt += 1
        return self._policy.delay(self._attempt, retry_after)

    def _log(self, why: str, delay: float) -> None:
        log.info(
            "mds_client: %s %s got %s; retry %d/%d in %.2fs",
            self._method,
            self._path,
            why,
            self._attempt,
            self._policy.max_retries,
            delay,
        )
