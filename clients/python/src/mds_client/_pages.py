"""Iteration that follows ``next_cursor``, the list resources, and the sync
of a store (as a job: the calls it makes, run by either client), for the sync
and async clients."""

from __future__ import annotations

from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterator,
    MutableMapping,
    Sequence,
)
from dataclasses import dataclass, field
from typing import Any, Generic, ParamSpec, Protocol, TypeVar, cast

from . import _calls
from ._calls import ActionFilters, Call, CompanyFilters, NewsFilters, Unpack
from ._pandas import require_pandas
from .errors import MdsError, SyncTokenExpiredError, TransportError
from .models import (
    ActionPage,
    Article,
    Bar,
    ChangesPage,
    Company,
    CompanyDetail,
    CompanyPage,
    CorporateAction,
    Event,
    EventPage,
    MarketDayPage,
    NewsPage,
    ResponseMeta,
)

__all__ = [
    "ActionFilters",
    "Actions",
    "AsyncActions",
    "AsyncCompanies",
    "AsyncEvents",
    "AsyncItems",
    "AsyncNews",
    "Companies",
    "CompanyFilters",
    "Events",
    "Items",
    "News",
    "NewsFilters",
    "SyncResult",
    "Unpack",
]


T_co = TypeVar("T_co", covariant=True)
T = TypeVar("T")


class Page(Protocol[T_co]):
    @property
    def data(self) -> Sequence[T_co]: ...
    @property
    def has_more(self) -> bool: ...
    @property
    def next_cursor(self) -> str | None: ...
    @property
    def meta(self) -> ResponseMeta: ...
    @property
    def remaining(self) -> int | None: ...
    @property
    def reset(self) -> int | None: ...


P = TypeVar("P", bound="Page[Any]")
A = ParamSpec("A")
S = TypeVar("S")
F = TypeVar("F")
R = TypeVar("R")


def next_cursor(page: Page[Any]) -> str | None:
    """Where the page after ``page`` starts, or ``None`` when it is the last."""
    return page.next_cursor if page.has_more else None


def follow(fetch: Callable[[str | None], P], cursor: str | None) -> Iterator[P]:
    """The pages from ``cursor`` to the end, fetched one at a time."""
    while True:
        page = fetch(cursor)
        yield page
        if (cursor := next_cursor(page)) is None:
            return


async def afollow(
    fetch: Callable[[str | None], Awaitable[P]], cursor: str | None
) -> AsyncIterator[P]:
    """The async twin of :func:`follow`."""
    while True:
        page = await fetch(cursor)
        yield page
        if (cursor := next_cursor(page)) is None:
            return


class _Walk(Generic[T, F]):
    """What :class:`Items` and :class:`AsyncItems` hold: how to fetch the page at
    a cursor (``F``: the page, or an awaitable of it), how to frame the items,
    where to start, and the page fetched last."""

    def __init__(
        self,
        fetch: Callable[[str | None], F],
        framer: Callable[[Sequence[T]], Any],
        cursor: str | None = None,
    ) -> None:
        self._fetch = fetch
        self._framer = framer
        self._cursor = cursor
        self.last_page: Page[T] | None = None


class Items(_Walk[T, Page[T]]):
    """Every item of every page, fetched lazily, one page at a time.

    Iterate it (``for c in items``), take ``.pages()``, ``.all()`` or
    ``.to_pandas()`` (the ``pandas`` extra). Each pass starts from the first page.
    """

    def pages(self) -> Iterator[Page[T]]:
        for page in follow(self._fetch, self._cursor):
            self.last_page = page
            yield page

    def __iter__(self) -> Iterator[T]:
        for page in self.pages():
            yield from page.data

    def all(self) -> list[T]:
        return list(self)

    def to_pandas(self) -> Any:
        """Every item as one DataFrame (needs the ``pandas`` extra)."""
        return self._framer(self.all())


class AsyncItems(_Walk[T, Awaitable[Page[T]]]):
    """The async twin of :class:`Items`: ``async for``, ``await .all()``, ``await .to_pandas()``."""

    async def pages(self) -> AsyncIterator[Page[T]]:
        async for page in afollow(self._fetch, self._cursor):
            self.last_page = page
            yield page

    async def _items(self) -> AsyncIterator[T]:
        async for page in self.pages():
            for item in page.data:
                yield item

    def __aiter__(self) -> AsyncIterator[T]:
        return self._items()

    async def all(self) -> list[T]:
        return [item async for item in self._items()]

    async def to_pandas(self) -> Any:
        return self._framer(await self.all())


class Listing(Generic[A, T, P, S]):
    """What a list route's sync and async resources share: calling one is one
    page (``S``: the page, or an awaitable of it); the arguments (``A``) are
    those of the route's :mod:`._calls` builder, so its filters stay typed."""

    def __init__(
        self,
        send: Callable[[Call[P]], S],
        build: Callable[A, Call[P]],
        framer: Callable[[Sequence[T]], Any],
    ) -> None:
        self._send = send
        self._build = build
        self._framer = framer

    def __call__(self, *args: A.args, **kwargs: A.kwargs) -> S:
        return self._send(self._build(*args, **kwargs))

    def _fetcher(self, first: Call[P]) -> Callable[[str | None], S]:
        """Fetches the page at a cursor of the list that ``first`` starts."""
        return lambda cursor: self._send(first.at(cursor))


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


class Companies(SyncListing[A, Company, CompanyPage]):
    """``client.companies(...)``: ``GET /v1/companies`` with :class:`CompanyFilters`."""


class News(SyncListing[A, Article, NewsPage]):
    """``client.news(...)``: ``GET /v1/news`` (articles newest first) with :class:`NewsFilters`."""


class Events(SyncListing[A, Event, EventPage]):
    """``client.events(...)``: ``GET /v1/events`` (the event log, oldest first after
    ``since``) with :class:`EventFilters`."""


class Actions(SyncListing[A, CorporateAction, ActionPage]):
    """``client.actions(...)``: ``GET /v1/actions`` (the corporate-action calendar,
    ``ex_date`` ascending) with :class:`ActionFilters`."""


class MarketDay(SyncListing[A, Bar, MarketDayPage]):
    """``client.market_day(date, ...)``: ``GET /v1/prices?date=`` (the market on
    one day, by ISIN then series); ``.iter(...).to_pandas()`` is every bar of the
    day as one DataFrame."""


class AsyncCompanies(AsyncListing[A, Company, CompanyPage]):
    """``client.companies(...)``: ``GET /v1/companies`` with :class:`CompanyFilters`."""


class AsyncNews(AsyncListing[A, Article, NewsPage]):
    """``client.news(...)``: ``GET /v1/news`` (articles newest first) with :class:`NewsFilters`."""


class AsyncEvents(AsyncListing[A, Event, EventPage]):
    """``client.events(...)``: ``GET /v1/events`` (the event log, oldest first after
    ``since``) with :class:`EventFilters`."""


class AsyncActions(AsyncListing[A, CorporateAction, ActionPage]):
    """``client.actions(...)``: ``GET /v1/actions`` (the corporate-action calendar,
    ``ex_date`` ascending) with :class:`ActionFilters`."""


class AsyncMarketDay(AsyncListing[A, Bar, MarketDayPage]):
    """``client.market_day(date, ...)``: ``GET /v1/prices?date=`` (the market on
    one day, by ISIN then series)."""


@dataclass
class SyncResult:
    """What one :meth:`Client.sync` did: store ``sync_token`` for the next call."""

    sync_token: str
    changed: list[CompanyDetail] = field(default_factory=list)
    from_scratch: bool = False


class SyncRun:
    """One pass of a sync: applies each page of the change feed to the store as it
    arrives and keeps the token the last page ends with."""

    def __init__(self, store: MutableMapping[str, CompanyDetail], since: str | None) -> None:
        self._store = store
        self._from_scratch = since is None
        self._changed: list[CompanyDetail] = []
        self._token: str | None = None

    def apply(self, page: ChangesPage) -> None:
        for detail in page.data:
            self._store[detail.isin] = detail
            self._changed.append(detail)
        self._token = page.sync_token

    def result(self) -> SyncResult:
        if self._token is None:
            raise TransportError("the change feed ended without a sync_token")
        return SyncResult(self._token, self._changed, self._from_scratch)


def synced_frame(df: Any, fresh: dict[str, CompanyDetail], result: SyncResult) -> tuple[Any, str]:
    """What ``sync_frame`` returns: ``df`` with the companies a sync brought upserted."""
    from ._pandas import merge_details

    base = None if result.from_scratch else df  # a full sync replaces the frame
    return merge_details(base, list(fresh.values())), result.sync_token


Job = Generator[Call[Any], Any, R]
"""Work of several calls, without I/O: it yields each call and is sent its
result (or thrown its error); it returns what it made of them. A client runs
it with :class:`Steps`."""


class Steps(Generic[R]):
    """A :data:`Job` being run: :meth:`next` is the call it needs next, given
    the result (or the error) of the one before; ``None`` once it is done."""

    def __init__(self, job: Job[R]) -> None:
        self._job = job
        self._value: Any = None
        self._error: MdsError | None = None
        self._result: Any = None

    def next(self) -> Call[Any] | None:
        """The call the job needs now, or ``None``: it has returned."""
        try:
            if self._error is None:
                return self._job.send(self._value)
            error, self._error = self._error, None
            return self._job.throw(error)
        except StopIteration as done:
            self._result = done.value
            return None

    def answer(self, value: Any) -> None:
        """The result of the call :meth:`next` gave."""
        self._value = value

    def fail(self, error: MdsError) -> None:
        """The error of the call :meth:`next` gave: raised in the job."""
        self._error = error

    def result(self) -> R:
        """What the job returned."""
        return cast(R, self._result)


def sync(
    store: MutableMapping[str, CompanyDetail],
    since: str | None = None,
    *,
    limit: int = 200,
    restart_if_expired: bool = True,
) -> Job[SyncResult]:
    """Bring ``store`` (ISIN -> :class:`CompanyDetail`) up to date from ``since``
    (a stored ``sync_token``; ``None`` = everything) and return the new token.

    Rows are applied as pages arrive; keep the old token until this returns,
    so an interrupted sync is simply run again. A token older than the
    server's history (``410``) clears ``store`` and syncs from scratch,
    unless ``restart_if_expired`` is false (then it raises)."""
    try:
        return (yield from _sync_once(store, since, limit))
    except SyncTokenExpiredError:
        if not restart_if_expired:
            raise
        store.clear()
        return (yield from _sync_once(store, None, limit))


def _sync_once(
    store: MutableMapping[str, CompanyDetail], since: str | None, limit: int
) -> Job[SyncResult]:
    run = SyncRun(store, since)
    cursor = None
    while True:
        page: ChangesPage = yield _calls.changes(since, cursor=cursor, limit=limit)
        run.apply(page)
        if (cursor := next_cursor(page)) is None:
            return run.result()


def sync_frame(df: Any, since: str | None = None, *, limit: int = 200) -> Job[tuple[Any, str]]:
    """The DataFrame flavour of :meth:`Client.sync`: returns ``(frame, sync_token)``
    where ``frame`` is ``df`` (a frame from an earlier call, indexed by ISIN,
    or ``None``) with every changed company upserted."""
    require_pandas()
    fresh: dict[str, CompanyDetail] = {}
    result = yield from sync(fresh, since, limit=limit)
    return synced_frame(df, fresh, result)
