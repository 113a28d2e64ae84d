"""The asynchronous client (``AsyncClient``), the twin of ``Client``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, MutableMapping
from typing import Any
from urllib.parse import quote

import httpx

from . import _core
from ._core import RetryPolicy
from ._pages import AsyncItems, CompanyFilters, NewsFilters, Page, SyncResult, Unpack
from .errors import SyncTokenExpiredError, TransportError
from .models import (
    Article,
    ChangesPage,
    Company,
    CompanyDetail,
    CompanyPage,
    DailyUsage,
    NewsPage,
    ResponseMeta,
    Usage,
)


class AsyncCompanies:
    """``client.companies(...)`` is one page; ``.iter(...)``, ``.pages(...)`` and
    ``.all(...)`` follow ``next_cursor`` to the end."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def __call__(
        self, *, cursor: str | None = None, **filters: Unpack[CompanyFilters]
    ) -> CompanyPage:
        body, meta = await self._client._get("/v1/companies", {**filters, "cursor": cursor})
        return CompanyPage.from_json(body, meta)

    def iter(
        self, *, cursor: str | None = None, **filters: Unpack[CompanyFilters]
    ) -> AsyncItems[Company]:
        from ._pandas import companies_frame

        async def fetch(c: str | None) -> Page[Company]:
            return await self(cursor=c, **filters)

        return AsyncItems(fetch, companies_frame, cursor)

    def pages(self, **filters: Unpack[CompanyFilters]) -> AsyncIterator[Page[Company]]:
        return self.iter(**filters).pages()

    async def all(self, **filters: Unpack[CompanyFilters]) -> list[Company]:
        return await self.iter(**filters).all()


class AsyncNews:
    """``client.news(...)`` is one page of articles, newest first; ``.iter(...)``,
    ``.pages(...)``, ``.all(...)`` follow cursors."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def __call__(
        self, *, cursor: str | None = None, **filters: Unpack[NewsFilters]
    ) -> NewsPage:
        body, meta = await self._client._get("/v1/news", {**filters, "cursor": cursor})
        return NewsPage.from_json(body, meta)

    def iter(
        self, *, cursor: str | None = None, **filters: Unpack[NewsFilters]
    ) -> AsyncItems[Article]:
        from ._pandas import articles_frame

        async def fetch(c: str | None) -> Page[Article]:
            return await self(cursor=c, **filters)

        return AsyncItems(fetch, articles_frame, cursor)

    def pages(self, **filters: Unpack[NewsFilters]) -> AsyncIterator[Page[Article]]:
        return self.iter(**filters).pages()

    async def all(self, **filters: Unpack[NewsFilters]) -> list[Article]:
        return await self.iter(**filters).all()


class AsyncClient:
    """The async client of the mds API (use ``async with``; every call is awaited).

    ``api_key`` defaults to ``$MDS_API_KEY``, ``base_url`` to ``$MDS_BASE_URL``
    (else ``http://127.0.0.1:8080``). ``retry`` sets how ``429``/``503`` are
    retried (:class:`RetryPolicy`; ``RetryPolicy(max_retries=0)`` turns it off).
    The key is sent only in the ``Authorization`` header and is never shown.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._api_key, self.base_url = _core.resolve_config(api_key, base_url)
        self.retry = retry or RetryPolicy()
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=_core.headers_for(self._api_key),
            timeout=timeout,
            transport=transport,
        )
        self.companies = AsyncCompanies(self)
        self.news = AsyncNews(self)

    def __repr__(self) -> str:
        return f"AsyncClient(base_url={self.base_url!r}, api_key='***')"

    __str__ = __repr__

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _get(
        self, path: str, params: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], ResponseMeta]:
        q = _core.query(params or {})
        attempt = 0
        while True:
            try:
                response = await self._http.get(path, params=q)
            except httpx.TransportError as exc:
                attempt += 1
                delay = self.retry.delay(attempt, None)
                if delay is None:
                    raise TransportError(
                        f"GET {path} failed: {type(exc).__name__}: "
                        + _core.scrub(str(exc), self._api_key)
                    ) from None
                _core.log_retry(
                    "GET", path, type(exc).__name__, delay, attempt, self.retry.max_retries
                )
                await asyncio.sleep(delay)
                continue
            if response.status_code in _core.RETRY_STATUSES:
                attempt += 1
                delay = self.retry.delay(attempt, _core.retry_after_of(response))
                if delay is not None:
                    _core.log_retry(
                        "GET",
                        path,
                        str(response.status_code),
                        delay,
                        attempt,
                        self.retry.max_retries,
                    )
                    await asyncio.sleep(delay)
                    continue
            return _core.decode(response, self._api_key)

    # --- single resources -------------------------------------------------

    async def company(self, isin: str) -> CompanyDetail:
        """``GET /v1/companies/{isin}``: everything known about one company."""
        body, meta = await self._get(f"/v1/companies/{quote(isin.strip(), safe='')}")
        return CompanyDetail.from_json(body, meta)

    async def article(self, slug: str) -> Article:
        """``GET /v1/news/{slug}``: one article, with its body."""
        body, meta = await self._get(f"/v1/news/{quote(slug, safe='')}")
        return Article.from_json(body, meta)

    async def usage(self) -> Usage:
        """``GET /v1/usage``: this key's tier, limits and requests (free)."""
        body, meta = await self._get("/v1/usage")
        return Usage.from_json(body, meta)

    async def usage_daily(self, month: str | None = None) -> DailyUsage:
        """``GET /v1/usage/daily``: day by day for ``month`` (``YYYY-MM``, default this month)."""
        body, meta = await self._get("/v1/usage/daily", {"month": month})
        return DailyUsage.from_json(body, meta)

    # --- the change feed --------------------------------------------------

    async def changes(
        self, since: str | None = None, *, cursor: str | None = None, limit: int | None = None
    ) -> ChangesPage:
        """One page of ``GET /v1/companies/changes``; the last page has ``sync_token``."""
        body, meta = await self._get(
            "/v1/companies/changes", {"since": since, "cursor": cursor, "limit": limit}
        )
        return ChangesPage.from_json(body, meta)

    async def changes_pages(
        self, since: str | None = None, *, limit: int | None = None
    ) -> AsyncIterator[ChangesPage]:
        cursor: str | None = None
        while True:
            page = await self.changes(since, cursor=cursor, limit=limit)
            yield page
            if not page.has_more or page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def sync(
        self,
        store: MutableMapping[str, CompanyDetail],
        since: str | None = None,
        *,
        limit: int = 200,
        restart_if_expired: bool = True,
    ) -> SyncResult:
        """Bring ``store`` (ISIN -> :class:`CompanyDetail`) up to date from ``since``
        (a stored ``sync_token``; ``None`` = everything) and return the new token.

        Rows are applied as pages arrive; keep the old token until this returns,
        so an interrupted sync is simply run again. A token older than the
        server's history (``410``) clears ``store`` and syncs from scratch,
        unless ``restart_if_expired`` is false (then it raises)."""
        try:
            return await self._sync_once(store, since, limit, from_scratch=since is None)
        except SyncTokenExpiredError:
            if not restart_if_expired:
                raise
            store.clear()
            return await self._sync_once(store, None, limit, from_scratch=True)

    async def _sync_once(
        self,
        store: MutableMapping[str, CompanyDetail],
        since: str | None,
        limit: int,
        from_scratch: bool,
    ) -> SyncResult:
        changed: list[CompanyDetail] = []
        token: str | None = None
        async for page in self.changes_pages(since, limit=limit):
            for detail in page.data:
                store[detail.isin] = detail
                changed.append(detail)
            token = page.sync_token
        if token is None:
            raise TransportError("the change feed ended without a sync_token")
        return SyncResult(sync_token=token, changed=changed, from_scratch=from_scratch)

    async def sync_frame(
        self, df: Any, since: str | None = None, *, limit: int = 200
    ) -> tuple[Any, str]:
        """The DataFrame flavour of :meth:`sync`: returns ``(frame, sync_token)``
        where ``frame`` is ``df`` (a frame from an earlier call, indexed by ISIN,
        or ``None``) with every changed company upserted."""
        from ._pandas import merge_details, require_pandas

        require_pandas()
        fresh: dict[str, CompanyDetail] = {}
        result = await self.sync(fresh, since, limit=limit)
        base = None if result.from_scratch else df  # a full sync replaces the frame
        return merge_details(base, list(fresh.values())), result.sync_token
