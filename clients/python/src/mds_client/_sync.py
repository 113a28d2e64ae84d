"""The synchronous client: the transport of its calls (built in :mod:`._calls`)."""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator, MutableMapping, Sequence
from datetime import date
from typing import Any, Literal

import httpx

from . import _calls, _core, _stream
from ._calls import Call, R, StreamFilters, Unpack
from ._pages import A, Items, Listing, P, Page, SyncResult, SyncRun, T, follow, synced_frame
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


class SyncListing(Listing[A, T, P, P]):
    """A list route of :class:`Client`: ``resource(...)`` is one page; ``.iter(...)``,
    ``.pages(...)`` and ``.all(...)`` follow ``next_cursor`` to the end."""

    def iter(self, *args: A.args, **kwargs: A.kwargs) -> Items[T]:
        first = self._build(*args, **kwargs)
        return Items(self._fetcher(first), self._framer, first.cursor)

    def pages(self, *args: A.args, **kwargs: A.kwargs) -> Iterator[Page[T]]:
        return self.iter(*args, **kwargs).pages()

    def all(self, *args: A.args, **kwargs: A.kwargs) -> list[T]:
        return self.iter(*args, **kwargs).all()


class Companies(SyncListing[A, Company, CompanyPage]):
    """``client.companies(...)``: ``GET /v1/companies`` with :class:`CompanyFilters`."""


class News(SyncListing[A, Article, NewsPage]):
    """``client.news(...)``: ``GET /v1/news`` (articles newest first) with :class:`NewsFilters`."""


class Events(SyncListing[A, Event, EventPage]):
    """``client.events(...)``: ``GET /v1/events`` (the event log, oldest first after
    ``since``) with :class:`EventFilters`."""


class Client(_core.ClientBase[httpx.BaseTransport]):
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

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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

    # --- single resources -------------------------------------------------

    def company(self, isin: str, as_of: date | str | None = None) -> CompanyDetail:
        """``GET /v1/companies/{isin}``: everything known about one company; with
        ``as_of`` (a day from 1990-01-01 up to today), as it stood then."""
        return self._send(_calls.company(isin, as_of))

    def history(self, isin: str) -> CompanyHistory:
        """``GET /v1/companies/{isin}/history``: its identity events, oldest first."""
        return self._send(_calls.history(isin))

    def symbol(self, symbol: str, exchange: Literal["nse", "bse"] = "nse") -> SymbolHistory:
        """``GET /v1/symbols/{symbol}``: every ISIN that carried it, with when."""
        return self._send(_calls.symbol(symbol, exchange))

    def article(self, slug: str) -> Article:
        """``GET /v1/news/{slug}``: one article, with its body."""
        return self._send(_calls.article(slug))

    def usage(self) -> Usage:
        """``GET /v1/usage``: this key's tier, limits and requests (free)."""
        return self._send(_calls.usage())

    def usage_daily(self, month: str | None = None) -> DailyUsage:
        """``GET /v1/usage/daily``: day by day for ``month`` (``YYYY-MM``, default this month)."""
        return self._send(_calls.usage_daily(month))

    # --- the change feed --------------------------------------------------

    def changes(
        self, since: str | None = None, *, cursor: str | None = None, limit: int | None = None
    ) -> ChangesPage:
        """One page of ``GET /v1/companies/changes``; the last page has ``sync_token``."""
        return self._send(_calls.changes(since, cursor, limit))

    def changes_pages(
        self, since: str | None = None, *, limit: int | None = None
    ) -> Iterator[ChangesPage]:
        """Every page of the change feed from ``since``, fetched as iterated."""
        return follow(lambda cursor: self.changes(since, cursor=cursor, limit=limit), None)

    def sync(
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
            return self._sync_once(store, since, limit)
        except SyncTokenExpiredError:
            if not restart_if_expired:
                raise
            store.clear()
            return self._sync_once(store, None, limit)

    def _sync_once(
        self, store: MutableMapping[str, CompanyDetail], since: str | None, limit: int
    ) -> SyncResult:
        run = SyncRun(store, since)
        for page in self.changes_pages(since, limit=limit):
            run.apply(page)
        return run.result()

    def sync_frame(self, df: Any, since: str | None = None, *, limit: int = 200) -> tuple[Any, str]:
        """The DataFrame flavour of :meth:`sync`: returns ``(frame, sync_token)``
        where ``frame`` is ``df`` (a frame from an earlier call, indexed by ISIN,
        or ``None``) with every changed company upserted."""
        require_pandas()
        fresh: dict[str, CompanyDetail] = {}
        return synced_frame(df, fresh, self.sync(fresh, since, limit=limit))

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

    # --- webhook endpoints (contract 11.2) ----------------------------------

    def create_webhook(
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
        return self._send(_calls.webhook_create(url, description=description, **fields))

    def webhooks(self) -> list[WebhookEndpoint]:
        """``GET /v1/webhooks``: the account's endpoints."""
        return self._send(_calls.webhook_list())

    def webhook(self, endpoint_id: str) -> WebhookEndpoint:
        """``GET /v1/webhooks/{id}``."""
        return self._send(_calls.webhook_get(endpoint_id))

    def update_webhook(
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
        return self._send(call)

    def delete_webhook(self, endpoint_id: str) -> None:
        """``DELETE /v1/webhooks/{id}``."""
        self._send(_calls.webhook_delete(endpoint_id))

    def rotate_webhook_secret(
        self, endpoint_id: str, expires_in: int | None = None
    ) -> WebhookEndpoint:
        """``POST /v1/webhooks/{id}/rotate-secret``: the new ``secret``; the old
        one keeps signing beside it for ``expires_in`` s (default 86,400)."""
        return self._send(_calls.webhook_rotate(endpoint_id, expires_in))

    def test_webhook(self, endpoint_id: str) -> str:
        """``POST /v1/webhooks/{id}/test``: queues a ``ping``; its event id."""
        return self._send(_calls.webhook_test(endpoint_id))

    def webhook_attempts(self, endpoint_id: str) -> list[WebhookAttempt]:
        """``GET /v1/webhooks/{id}/attempts``: the latest delivery attempts."""
        return self._send(_calls.webhook_attempts(endpoint_id))

    def replay_webhook(self, endpoint_id: str, since: str) -> WebhookEndpoint:
        """``POST /v1/webhooks/{id}/replay``: queues again what matched after ``since``."""
        return self._send(_calls.webhook_replay(endpoint_id, since))
