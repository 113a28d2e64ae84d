"""The asynchronous client (``AsyncClient``), the twin of ``Client``: the transport
of its calls (built in :mod:`._calls`), awaited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, MutableMapping, Sequence
from datetime import date
from typing import Any, Literal

import httpx

from . import _calls, _core, _stream
from ._calls import Call, R, StreamFilters, Unpack
from ._pages import A, AsyncItems, Listing, P, Page, SyncResult, SyncRun, T, afollow, synced_frame
from ._pandas import articles_frame, companies_frame, events_frame, require_pandas
from .errors import SyncTokenExpiredError
from .models import (
    Article,
    ChangesPage,
    Company,
    CompanyDetail,
    CompanyHistory,
    CompanyPage,
    DailyUsage,
    Event,
    EventPage,
    NewsPage,
    SymbolHistory,
    Usage,
    WebhookAttempt,
    WebhookEndpoint,
)


class AsyncListing(Listing[A, T, P, Awaitable[P]]):
    """A list route of :class:`AsyncClient`: ``await resource(...)`` is one page;
    ``.iter(...)`` (``async for``), ``.pages(...)`` and ``await .all(...)`` follow
    ``next_cursor`` to the end."""

    def iter(self, *args: A.args, **kwargs: A.kwargs) -> AsyncItems[T]:
        first = self._build(*args, **kwargs)
        return AsyncItems(self._fetcher(first), self._framer, first.cursor)

    def pages(self, *args: A.args, **kwargs: A.kwargs) -> AsyncIterator[Page[T]]:
        return self.iter(*args, **kwargs).pages()

    async def all(self, *args: A.args, **kwargs: A.kwargs) -> list[T]:
        return await self.iter(*args, **kwargs).all()


class AsyncCompanies(AsyncListing[A, Company, CompanyPage]):
    """``client.companies(...)``: ``GET /v1/companies`` with :class:`CompanyFilters`."""


class AsyncNews(AsyncListing[A, Article, NewsPage]):
    """``client.news(...)``: ``GET /v1/news`` (articles newest first) with :class:`NewsFilters`."""


class AsyncEvents(AsyncListing[A, Event, EventPage]):
    """``client.events(...)``: ``GET /v1/events`` (the event log, oldest first after
    ``since``) with :class:`EventFilters`."""


class AsyncClient(_core.ClientBase[httpx.AsyncBaseTransport]):
    """The async client of the mds API: :class:`Client`'s arguments and methods,
    every call awaited (use ``async with``)."""

    def _open(self, options: dict[str, Any]) -> None:
        self._http = httpx.AsyncClient(**options)
        self.companies = AsyncCompanies(self._send, _calls.companies, companies_frame)
        self.news = AsyncNews(self._send, _calls.news, articles_frame)
        self.events = AsyncEvents(self._send, _calls.events, events_frame)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

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

    # --- single resources -------------------------------------------------

    async def company(self, isin: str, as_of: date | str | None = None) -> CompanyDetail:
        """``GET /v1/companies/{isin}``: everything known about one company; with
        ``as_of`` (a day from 1990-01-01 up to today), as it stood then."""
        return await self._send(_calls.company(isin, as_of))

    async def history(self, isin: str) -> CompanyHistory:
        """``GET /v1/companies/{isin}/history``: its identity events, oldest first."""
        return await self._send(_calls.history(isin))

    async def symbol(self, symbol: str, exchange: Literal["nse", "bse"] = "nse") -> SymbolHistory:
        """``GET /v1/symbols/{symbol}``: every ISIN that carried it, with when."""
        return await self._send(_calls.symbol(symbol, exchange))

    async def article(self, slug: str) -> Article:
        """:meth:`Client.article`, awaited."""
        return await self._send(_calls.article(slug))

    async def usage(self) -> Usage:
        """:meth:`Client.usage`, awaited."""
        return await self._send(_calls.usage())

    async def usage_daily(self, month: str | None = None) -> DailyUsage:
        """:meth:`Client.usage_daily`, awaited."""
        return await self._send(_calls.usage_daily(month))

    # --- the change feed --------------------------------------------------

    async def changes(
        self, since: str | None = None, *, cursor: str | None = None, limit: int | None = None
    ) -> ChangesPage:
        """:meth:`Client.changes`, awaited."""
        return await self._send(_calls.changes(since, cursor, limit))

    def changes_pages(
        self, since: str | None = None, *, limit: int | None = None
    ) -> AsyncIterator[ChangesPage]:
        """:meth:`Client.changes_pages`, for ``async for``."""
        return afollow(lambda cursor: self.changes(since, cursor=cursor, limit=limit), None)

    async def sync(
        self,
        store: MutableMapping[str, CompanyDetail],
        since: str | None = None,
        *,
        limit: int = 200,
        restart_if_expired: bool = True,
    ) -> SyncResult:
        """:meth:`Client.sync`, awaited."""
        try:
            return await self._sync_once(store, since, limit)
        except SyncTokenExpiredError:
            if not restart_if_expired:
                raise
            store.clear()
            return await self._sync_once(store, None, limit)

    async def _sync_once(
        self, store: MutableMapping[str, CompanyDetail], since: str | None, limit: int
    ) -> SyncResult:
        run = SyncRun(store, since)
        async for page in self.changes_pages(since, limit=limit):
            run.apply(page)
        return run.result()

    async def sync_frame(
        self, df: Any, since: str | None = None, *, limit: int = 200
    ) -> tuple[Any, str]:
        """:meth:`Client.sync_frame`, awaited."""
        require_pandas()
        fresh: dict[str, CompanyDetail] = {}
        return synced_frame(df, fresh, await self.sync(fresh, since, limit=limit))

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

    # --- webhook endpoints (contract 11.2) ----------------------------------

    async def create_webhook(
        self,
        url: str,
        *,
        types: Sequence[str] | None = None,
        isins: Sequence[str] | None = None,
        tickers: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        description: str | None = None,
    ) -> WebhookEndpoint:
        """``POST /v1/webhooks``: a new endpoint (``https`` only); its ``secret``
        is in this answer only: store it to verify deliveries."""
        fields = {"types": types, "isins": isins, "tickers": tickers, "tags": tags}
        return await self._send(_calls.webhook_create(url, description=description, **fields))

    async def webhooks(self) -> list[WebhookEndpoint]:
        """``GET /v1/webhooks``: the account's endpoints."""
        return await self._send(_calls.webhook_list())

    async def webhook(self, endpoint_id: str) -> WebhookEndpoint:
        """``GET /v1/webhooks/{id}``."""
        return await self._send(_calls.webhook_get(endpoint_id))

    async def update_webhook(
        self,
        endpoint_id: str,
        *,
        url: str | None = None,
        types: Sequence[str] | None = None,
        isins: Sequence[str] | None = None,
        tickers: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        description: str | None = None,
        status: str | None = None,
    ) -> WebhookEndpoint:
        """``PATCH /v1/webhooks/{id}``: the fields given change (``status``:
        ``enabled`` or ``disabled``)."""
        fields = {"url": url, "types": types, "isins": isins, "tickers": tickers, "tags": tags}
        call = _calls.webhook_update(endpoint_id, description=description, status=status, **fields)
        return await self._send(call)

    async def delete_webhook(self, endpoint_id: str) -> None:
        """``DELETE /v1/webhooks/{id}``."""
        await self._send(_calls.webhook_delete(endpoint_id))

    async def rotate_webhook_secret(
        self, endpoint_id: str, expires_in: int | None = None
    ) -> WebhookEndpoint:
        """``POST /v1/webhooks/{id}/rotate-secret``: the new ``secret``; the old
        one keeps signing beside it for ``expires_in`` s (default 86,400)."""
        return await self._send(_calls.webhook_rotate(endpoint_id, expires_in))

    async def test_webhook(self, endpoint_id: str) -> str:
        """``POST /v1/webhooks/{id}/test``: queues a ``ping``; its event id."""
        return await self._send(_calls.webhook_test(endpoint_id))

    async def webhook_attempts(self, endpoint_id: str) -> list[WebhookAttempt]:
        """``GET /v1/webhooks/{id}/attempts``: the latest delivery attempts."""
        return await self._send(_calls.webhook_attempts(endpoint_id))

    async def replay_webhook(self, endpoint_id: str, since: str) -> WebhookEndpoint:
        """``POST /v1/webhooks/{id}/replay``: queues again what matched after ``since``."""
        return await self._send(_calls.webhook_replay(endpoint_id, since))
