"""Filters and iteration that follows ``next_cursor``, for the sync and async clients."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, Protocol, TypedDict, TypeVar

from .models import CompanyDetail, ResponseMeta

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover
    from typing_extensions import Unpack

__all__ = ["AsyncItems", "CompanyFilters", "Items", "NewsFilters", "SyncResult", "Unpack"]


class CompanyFilters(TypedDict, total=False):
    """Filters of ``GET /v1/companies`` (they combine with AND)."""

    letter: str
    industry: str
    exchange: Literal["bse", "nse"]
    market_cap: Literal["large_cap", "mid_cap", "small_cap"]
    search: str
    ticker: str
    limit: int


class NewsFilters(TypedDict, total=False):
    """Filters of ``GET /v1/news``."""

    isin: str
    ticker: str
    category: str
    tag: str
    published_after: datetime | str
    published_before: datetime | str
    limit: int


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


class Items(Generic[T]):
    """Every item of every page, fetched lazily, one page at a time.

    Iterate it (``for c in items``), take ``.pages()``, ``.all()`` or
    ``.to_pandas()`` (the ``pandas`` extra). Each pass starts from the first page.
    """

    def __init__(
        self,
        fetch: Callable[[str | None], Page[T]],
        framer: Callable[[Sequence[T]], Any],
        cursor: str | None = None,
    ) -> None:
        self._fetch = fetch
        self._framer = framer
        self._cursor = cursor
        self.last_page: Page[T] | None = None

    def pages(self) -> Iterator[Page[T]]:
        cursor = self._cursor
        while True:
            page = self._fetch(cursor)
            self.last_page = page
            yield page
            if not page.has_more or page.next_cursor is None:
                return
            cursor = page.next_cursor

    def __iter__(self) -> Iterator[T]:
        for page in self.pages():
            yield from page.data

    def all(self) -> list[T]:
        return list(self)

    def to_pandas(self) -> Any:
        """Every item as one DataFrame (needs the ``pandas`` extra)."""
        return self._framer(self.all())


class AsyncItems(Generic[T]):
    """The async twin of :class:`Items`: ``async for``, ``await .all()``, ``await .to_pandas()``."""

    def __init__(
        self,
        fetch: Callable[[str | None], Awaitable[Page[T]]],
        framer: Callable[[Sequence[T]], Any],
        cursor: str | None = None,
    ) -> None:
        self._fetch = fetch
        self._framer = framer
        self._cursor = cursor
        self.last_page: Page[T] | None = None

    async def pages(self) -> AsyncIterator[Page[T]]:
        cursor = self._cursor
        while True:
            page = await self._fetch(cursor)
            self.last_page = page
            yield page
            if not page.has_more or page.next_cursor is None:
                return
            cursor = page.next_cursor

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


@dataclass
class SyncResult:
    """What one :meth:`Client.sync` did: store ``sync_token`` for the next call."""

    sync_token: str
    changed: list[CompanyDetail] = field(default_factory=list)
    from_scratch: bool = False
