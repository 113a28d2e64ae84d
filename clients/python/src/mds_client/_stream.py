"""What is not I/O of the event stream (``GET /v1/events/stream``, contract
11.3), for both clients: a Server-Sent Events parser, and the state of a
stream followed with resume (where it resumes, how long to wait before
connecting again, what an answer means)."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

import httpx

from ._calls import event_params, query
from ._core import RetryPolicy, Secret, log, retry_after_of, to_error, unexpected
from .models import Event, ResponseMeta

PATH = "/v1/events/stream"
"""The stream's route."""

STREAM_SILENCE = 45.0
"""Seconds a stream may be silent (the server comments every 15 s) before the
connection is taken for dead and the stream resumes on a new one."""


def stream_timeout(base: httpx.Timeout, silence: float) -> httpx.Timeout:
    """The client's timeouts, but reading waits at most ``silence`` seconds."""
    return httpx.Timeout(connect=base.connect, read=silence, write=base.write, pool=base.pool)


class SseParser:
    """Server-Sent Events as the service sends them: text in (any chunks),
    the ``data`` of each complete frame out; comments and frames without
    ``data`` (the keep-alive) are skipped."""

    def __init__(self) -> None:
        self._buf = ""

    def feed(self, text: str) -> list[str]:
        """The data of the frames that ``text`` completes, in order."""
        self._buf = (self._buf + text).replace("\r\n", "\n")
        *frames, self._buf = self._buf.split("\n\n")
        out = []
        for frame in frames:
            data = [_value(line) for line in frame.split("\n") if line.startswith("data:")]
            if data:
                out.append("\n".join(data))
        return out


def _value(line: str) -> str:
    """A field line's value: after the colon, one leading space dropped."""
    value = line.partition(":")[2]
    return value[1:] if value.startswith(" ") else value


class Following:
    """One stream being followed: its query, the id of the last event received
    (sent as ``Last-Event-ID`` on every new connection, so nothing is missed
    or repeated) and the connections in a row that failed."""

    def __init__(
        self, policy: RetryPolicy, api_key: Secret, since: str | None, filters: Mapping[str, Any]
    ) -> None:
        self.params = query(event_params(filters))
        self.last_event_id = since
        self._policy = policy
        self._api_key = api_key
        self._failures = 0
        self._retry_after: float | None = None
        self._parser = SseParser()
        self._received = False

    def headers(self) -> dict[str, str]:
        """The headers of a new connection."""
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if self.last_event_id is not None:
            headers["Last-Event-ID"] = self.last_event_id
        return headers

    def request(self, timeout: httpx.Timeout) -> dict[str, Any]:
        """The arguments of httpx's ``stream()`` that open a new connection."""
        return {
            "method": "GET",
            "url": PATH,
            "params": self.params,
            "headers": self.headers(),
            "timeout": timeout,
        }

    def wait(self) -> float:
        """Seconds to wait before the next connection: none after a stream
        that carried something, then backoff growing to the policy's cap
        (a ``503``'s ``Retry-After`` when it gave one)."""
        if self._failures == 0:
            return 0.0
        if self._retry_after is not None:
            return min(self._retry_after, self._policy.max_delay)
        ceiling = min(self._policy.backoff * 2 ** (self._failures - 1), self._policy.max_delay)
        return random.uniform(ceiling / 2, ceiling)

    def opened(self, response: httpx.Response) -> bool:
        """Whether the answer is the stream. ``503`` is retried (``False``); any
        other error is raised as its typed error (its body read first)."""
        self._parser = SseParser()
        self._received = False
        self._retry_after = None
        if response.status_code == 200:
            return True
        if response.status_code == 503:
            self._failures += 1
            self._retry_after = retry_after_of(response)
            log.info("mds_client: GET %s got 503; reconnecting", PATH)
            return False
        meta = ResponseMeta.from_response(response)
        if response.status_code >= 400:
            raise to_error(response, meta, self._api_key)
        detail = "the event stream answered neither 200 nor an error"
        raise unexpected(meta, "unexpected_status", detail)

    def feed(self, text: str) -> list[Event]:
        """The events that ``text`` (the stream's next chunk) completes."""
        self._received = True
        self._failures = 0
        events = [Event.from_json(json.loads(data)) for data in self._parser.feed(text)]
        if events:
            self.last_event_id = events[-1].id
        return events

    def lost(self, why: str) -> None:
        """The connection ended or failed (``why``); a connection that carried
        nothing counts as a failure, so the next one waits."""
        if not self._received:
            self._failures += 1
        log.info("mds_client: GET %s %s; resuming after %s", PATH, why, self.last_event_id)
