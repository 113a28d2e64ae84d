"""The asynchronous client (``AsyncClient``), the twin of ``Client``: the
transport of its calls (built in :mod:`._calls`, its methods declared in
:mod:`._api`), awaited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

import httpx

from . import _calls, _core, _stream
from ._api import Api
from ._calls import Call, R, StreamFilters, Unpack
from ._pages import (
    AsyncActions,
    AsyncCompanies,
    AsyncEvents,
    AsyncMarketDay,
    AsyncNews,
    Job,
    Steps,
    afollow,
)
from ._pandas import actions_frame, articles_frame, bars_frame, companies_frame, events_frame
from .errors import MdsError
from .models import ChangesPage, Event


class AsyncClient(Api[httpx.AsyncBaseTransport]):
    """The async client of the mds API: :class:`Client`'s arguments and methods,
    every call awaited (use ``async with``)."""

    def _open(self, options: dict[str, Any]) -> None:
        self._http = httpx.AsyncClient(**options)
        self.companies = AsyncCompanies(self._send, _calls.companies, companies_frame)
        self.news = AsyncNews(self._send, _calls.news, articles_frame)
        self.events = AsyncEvents(self._send, _calls.events, events_frame)
        self.actions = AsyncActions(self._send, _calls.actions, actions_frame)
        self.market_day = AsyncMarketDay(self._send, _calls.market_day, bars_frame)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- the change feed --------------------------------------------------

    def changes_pages(
        self, since: str | None = None, *, limit: int | None = None
    ) -> AsyncIterator[ChangesPage]:
        """:meth:`Client.changes_pages`, for ``async for``."""
        return afollow(lambda cursor: self.changes(since, cursor=cursor, limit=limit), None)

    # --- the event stream -------------------------------------------------

    async def stream_events(
        self,
        since: str | None = None,
        *,
        silence: float = _stream.STREAM_SILENCE,
        **filters: Unpack[StreamFilters],
    ) -> AsyncGenerator[Event, None]:
        """:meth:`Client.stream_events`, for ``async for``. Stop by leaving the
        loop and ``await``-ing ``aclose()`` on the iterator (or wrap it in
        ``contextlib.aclosing``), or by cancelling the task."""
        following = _stream.Following(self.retry, self._api_key, since, filters)
        timeout = _stream.stream_timeout(self._http.timeout, silence)
        while True:
            await asyncio.sleep(following.wait())
            try:
                async with self._http.stream(**following.request(timeout)) as response:
                    if response.status_code != 200:
                        await response.aread()
                    if not following.opened(response):
                        continue
                    async for text in response.aiter_text():
                        for event in following.feed(text):
                            yield event
                following.lost("ended")
            except httpx.TransportError as exc:
                following.lost(f"failed: {type(exc).__name__}")

    # --- the transport ---------------------------------------------------

    async def _send(self, call: Call[R]) -> R:
        attempts = _core.Attempts(self.retry, self._api_key, call.path, call.method)
        params = call.query()
        while True:
            try:
                response = await self._http.request(
                    call.method, call.path, params=params, json=call.body
                )
            except httpx.TransportError as exc:
                await asyncio.sleep(attempts.after_failure(exc))
                continue
            delay = attempts.after_answer(response)
            if delay is None:
                return call.read(response, self._api_key)
            await asyncio.sleep(delay)

    def _method(self, build: Callable[..., Call[Any] | Job[Any]]) -> Callable[..., Any]:
        async def method(*args: Any, **kwargs: Any) -> Any:
            return await self._run(build(*args, **kwargs))

        return method

    async def _run(self, work: Call[R] | Job[R]) -> R:
        if isinstance(work, Call):
            return await self._send(work)
        steps = Steps(work)
        while (call := steps.next()) is not None:
            try:
                steps.answer(await self._send(call))
            except MdsError as exc:
                steps.fail(exc)
        return steps.result()
