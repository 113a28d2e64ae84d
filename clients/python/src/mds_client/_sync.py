"""The synchronous client: the transport of its calls (built in :mod:`._calls`,
its methods declared in :mod:`._api`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator
from typing import Any

import httpx

from . import _calls, _core, _stream
from ._api import Api
from ._calls import Call, R, StreamFilters, Unpack
from ._pages import Actions, Companies, Events, Job, MarketDay, News, Steps, follow
from ._pandas import actions_frame, articles_frame, bars_frame, companies_frame, events_frame
from .errors import MdsError
from .models import ChangesPage, Event


class Client(Api[httpx.BaseTransport]):
    """A client of the mds API.

    ``api_key`` defaults to ``$MDS_API_KEY``, ``base_url`` to ``$MDS_BASE_URL``
    (else ``http://127.0.0.1:8080``). ``retry`` sets how ``429``/``503`` are
    retried (:class:`RetryPolicy`; ``RetryPolicy(max_retries=0)`` turns it off).
    The key is sent only in the ``Authorization`` header and is never shown.
    """

    def _open(self, options: dict[str, Any]) -> None:
        self._http = httpx.Client(**options)
        self.companies = Companies(self._send, _calls.companies, companies_frame)
        self.news = News(self._send, _calls.news, articles_frame)
        self.events = Events(self._send, _calls.events, events_frame)
        self.actions = Actions(self._send, _calls.actions, actions_frame)
        self.market_day = MarketDay(self._send, _calls.market_day, bars_frame)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the change feed --------------------------------------------------

    def changes_pages(
        self, since: str | None = None, *, limit: int | None = None
    ) -> Iterator[ChangesPage]:
        """Every page of the change feed from ``since``, fetched as iterated."""
        return follow(lambda cursor: self.changes(since, cursor=cursor, limit=limit), None)

    # --- the event stream -------------------------------------------------

    def stream_events(
        self,
        since: str | None = None,
        *,
        silence: float = _stream.STREAM_SILENCE,
        **filters: Unpack[StreamFilters],
    ) -> Generator[Event, None, None]:
        """``GET /v1/events/stream``: every event after ``since`` (an event id;
        ``None``: from the next one committed), as it is committed, for as long
        as it is iterated.

        A connection that drops, fails or is silent for ``silence`` seconds is
        opened again after the last event received (``Last-Event-ID``), so
        nothing is missed or repeated; ``503`` and failed connections are
        retried with backoff up to ``retry.max_delay``. Any other error answer
        (``400`` a bad ``since``, ``401``, ``410`` :class:`EventsExpiredError`,
        ``429`` :class:`TooManyStreamsError`) is raised and ends it. Stop by
        leaving the loop (``break``) or ``close()`` on the iterator."""
        following = _stream.Following(self.retry, self._api_key, since, filters)
        timeout = _stream.stream_timeout(self._http.timeout, silence)
        while True:
            time.sleep(following.wait())
            try:
                with self._http.stream(**following.request(timeout)) as response:
                    if response.status_code != 200:
                        response.read()
                    if not following.opened(response):
                        continue
                    for text in response.iter_text():
                        yield from following.feed(text)
                following.lost("ended")
            except httpx.TransportError as exc:
                following.lost(f"failed: {type(exc).__name__}")

    # --- the transport ---------------------------------------------------

    def _send(self, call: Call[R]) -> R:
        attempts = _core.Attempts(self.retry, self._api_key, call.path, call.method)
        params = call.query()
        while True:
            try:
                response = self._http.request(call.method, call.path, params=params, json=call.body)
            except httpx.TransportError as exc:
                time.sleep(attempts.after_failure(exc))
                continue
            delay = attempts.after_answer(response)
            if delay is None:
                return call.read(response, self._api_key)
            time.sleep(delay)

    def _method(self, build: Callable[..., Call[Any] | Job[Any]]) -> Callable[..., Any]:
        return lambda *args, **kwargs: self._run(build(*args, **kwargs))

    def _run(self, work: Call[R] | Job[R]) -> R:
        if isinstance(work, Call):
            return self._send(work)
        steps = Steps(work)
        while (call := steps.next()) is not None:
            try:
                steps.answer(self._send(call))
            except MdsError as exc:
                steps.fail(exc)
        return steps.result()
