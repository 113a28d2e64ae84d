"""Typed results for every response of the mds contract.

Every optional field of the wire format is ``None`` when the server sends
``null`` (or, for article ``body`` in lists, omits it). Timestamps are aware
:class:`datetime.datetime` objects in UTC; calendar dates are
:class:`datetime.date`. Unknown fields are ignored, so a newer server does not
break an older client.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any, ClassVar, Generic, TypeVar

import httpx

__all__ = [
    "Article",
    "ChangesPage",
    "Classification",
    "Company",
    "CompanyDetail",
    "CompanyHistory",
    "CompanyPage",
    "DailyUsage",
    "DayUsage",
    "Event",
    "EventPage",
    "IdentityEvent",
    "Listing",
    "MarketCap",
    "NewsPage",
    "ResponseMeta",
    "SymbolHistory",
    "SymbolPeriod",
    "Usage",
    "UsageWindow",
    "WebhookAttempt",
    "WebhookEndpoint",
]


T = TypeVar("T")


def parse_datetime(value: Any) -> datetime | None:
    """An RFC 3339 string to an aware datetime (UTC when no offset is given)."""
    if value is None:
        return None
    text = str(value)
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed


def _req_datetime(value: Any) -> datetime:
    parsed = parse_datetime(value)
    if parsed is None:
        raise ValueError("a required timestamp is null")
    return parsed


def parse_date(value: Any) -> date | None:
    if value is None:
        return None
    return date.fromisoformat(str(value)[:10])


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _int_header(headers: Mapping[str, str], name: str) -> int | None:
    raw = headers.get(name)
    if raw is None:
        return None
    try:
        return int(raw.strip())
    except ValueError:
        return None


@dataclass(frozen=True)
class ResponseMeta:
    """Where the caller stands after a response: the rate-limit headers.

    ``limit``, ``remaining`` and ``reset`` (seconds) come from
    ``X-RateLimit-Limit/Remaining/Reset`` (the per-minute limit);
    ``ratelimit`` and ``ratelimit_policy`` are the raw IETF draft headers.
    """

    status: int = 0
    request_id: str | None = None
    limit: int | None = None
    remaining: int | None = None
    reset: int | None = None
    ratelimit: str | None = None
    ratelimit_policy: str | None = None
    etag: str | None = None

    @classmethod
    def from_response(cls, response: httpx.Response) -> ResponseMeta:
        h = response.headers
        return cls(
            status=response.status_code,
            request_id=h.get("x-request-id"),
            limit=_int_header(h, "x-ratelimit-limit"),
            remaining=_int_header(h, "x-ratelimit-remaining"),
            reset=_int_header(h, "x-ratelimit-reset"),
            ratelimit=h.get("ratelimit"),
            ratelimit_policy=h.get("ratelimit-policy"),
            etag=h.get("etag"),
        )


_NO_META = ResponseMeta()


@dataclass(frozen=True)
class _Result:
    """A whole response: carries :class:`ResponseMeta` as ``meta``."""

    meta: ResponseMeta = field(default=_NO_META, repr=False, compare=False, kw_only=True)

    @property
    def remaining(self) -> int | None:
        """Requests left in the current minute (``X-RateLimit-Remaining``)."""
        return self.meta.remaining

    @property
    def reset(self) -> int | None:
        """Seconds until the per-minute allowance is full (``X-RateLimit-Reset``)."""
        return self.meta.reset

    @property
    def request_id(self) -> str | None:
        return self.meta.request_id


@dataclass(frozen=True)
class Company:
    """One security, keyed by ISIN (``V1Company``)."""

    isin: str
    ticker: str
    name: str
    industry: str | None
    sector: str | None
    is_bse: bool
    is_nse: bool
    market_cap_band: str | None
    logo_url: str | None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Company:
        return cls(**_company_fields(d))


def _company_fields(d: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "isin": str(d["isin"]),
        "ticker": str(d["ticker"]),
        "name": str(d["name"]),
        "industry": _opt_str(d.get("industry")),
        "sector": _opt_str(d.get("sector")),
        "is_bse": bool(d["is_bse"]),
        "is_nse": bool(d["is_nse"]),
        "market_cap_band": _opt_str(d.get("market_cap_band")),
        "logo_url": _opt_str(d.get("logo_url")),
    }


@dataclass(frozen=True)
class _ListPage(_Result, Generic[T]):
    """One page of a list: its items, and where the next page starts."""

    data: list[T]
    has_more: bool
    next_cursor: str | None

    _item: ClassVar[Any]  # the items' model: their from_json, and their DataFrame

    @classmethod
    def from_json(cls: type[LP], d: Mapping[str, Any], meta: ResponseMeta = _NO_META) -> LP:
        return cls(**cls._fields(d), meta=meta)

    @classmethod
    def _fields(cls, d: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "data": [cls._item.from_json(x) for x in d["data"]],
            "has_more": bool(d["has_more"]),
            "next_cursor": _opt_str(d.get("next_cursor")),
        }

    def __iter__(self) -> Iterator[T]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def to_pandas(self) -> Any:
        """The page as a DataFrame (needs the ``pandas`` extra)."""
        from ._pandas import frame_of

        return frame_of(self._item, self.data)


LP = TypeVar("LP", bound=_ListPage[Any])


@dataclass(frozen=True)
class CompanyPage(_ListPage[Company]):
    """One page of ``GET /v1/companies``."""

    _item = Company


@dataclass(frozen=True)
class Listing:
    """One exchange listing of a company (``V1CompanyDetail.listings``)."""

    exchange: str
    symbol: str
    scrip_code: str | None
    series: str | None
    listed_on: date | None
    face_value: float | None
    status: str

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Listing:
        return cls(
            exchange=str(d["exchange"]),
            symbol=str(d["symbol"]),
            scrip_code=_opt_str(d.get("scrip_code")),
            series=_opt_str(d.get("series")),
            listed_on=parse_date(d.get("listed_on")),
            face_value=_opt_float(d.get("face_value")),
            status=str(d["status"]),
        )


@dataclass(frozen=True)
class Classification:
    """The four classification levels NSE and BSE share; each ``None`` when unknown."""

    macro_sector: str | None
    sector: str | None
    industry: str | None
    basic_industry: str | None

    @classmethod
    def from_json(cls, d: Mapping[str, Any] | None) -> Classification:
        d = d or {}
        return cls(
            macro_sector=_opt_str(d.get("macro_sector")),
            sector=_opt_str(d.get("sector")),
            industry=_opt_str(d.get("industry")),
            basic_industry=_opt_str(d.get("basic_industry")),
        )


@dataclass(frozen=True)
class MarketCap:
    """The market capitalisation a company's band was ranked on, and its day."""

    inr_crore: float
    as_of: date | None

    @classmethod
    def from_json(cls, d: Mapping[str, Any] | None) -> MarketCap | None:
        if d is None:
            return None
        return cls(inr_crore=float(d["inr_crore"]), as_of=parse_date(d.get("as_of")))


@dataclass(frozen=True)
class CompanyDetail(Company, _Result):
    """Everything the service knows about one company (``V1CompanyDetail``)."""

    listings: list[Listing]
    classification: Classification
    market_cap: MarketCap | None
    updated_at: datetime
    #: ``active``, ``superseded`` (its ISIN was replaced) or ``delisted``.
    status: str = "active"
    #: The ISIN that replaced this one, if any.
    superseded_by: str | None = None
    #: The ISINs this one replaced, oldest first.
    supersedes: list[str] = field(default_factory=list)

    @classmethod
    def from_json(cls, d: Mapping[str, Any], meta: ResponseMeta = _NO_META) -> CompanyDetail:
        return cls(
            **_company_fields(d),
            meta=meta,
            listings=[Listing.from_json(x) for x in d.get("listings") or []],
            classification=Classification.from_json(d.get("classification")),
            market_cap=MarketCap.from_json(d.get("market_cap")),
            updated_at=_req_datetime(d["updated_at"]),
            status=str(d.get("status") or "active"),
            superseded_by=_opt_str(d.get("superseded_by")),
            supersedes=[str(x) for x in d.get("supersedes") or []],
        )


@dataclass(frozen=True)
class IdentityEvent:
    """One change to a security's identity (``V1IdentityEvent``): ``type`` is
    ``listed``, ``symbol_changed``, ``name_changed``, ``isin_changed`` or
    ``delisted``; the fields of its type (``exchange``, ``symbol``, ``from``,
    ``to``, ``face_value_from``, ``face_value_to``) are in ``fields``."""

    type: str
    date: date
    exact: bool
    fields: dict[str, Any]

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> IdentityEvent:
        rest = {k: v for k, v in d.items() if k not in ("type", "date", "exact")}
        day = parse_date(d["date"])
        assert day is not None
        return cls(type=str(d["type"]), date=day, exact=bool(d["exact"]), fields=rest)


@dataclass(frozen=True)
class CompanyHistory(_Result):
    """``GET /v1/companies/{isin}/history``: the ISIN's events, oldest first."""

    isin: str
    events: list[IdentityEvent]

    @classmethod
    def from_json(cls, d: Mapping[str, Any], meta: ResponseMeta = _NO_META) -> CompanyHistory:
        events = [IdentityEvent.from_json(e) for e in d["events"]]
        return cls(isin=str(d["isin"]), events=events, meta=meta)


@dataclass(frozen=True)
class SymbolPeriod:
    """When an ISIN carried a symbol: ``[from_, to)``, ``to`` ``None`` while current."""

    isin: str
    name: str
    from_: date
    to: date | None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SymbolPeriod:
        start = parse_date(d["from"])
        assert start is not None
        end = parse_date(d.get("to"))
        return cls(isin=str(d["isin"]), name=str(d["name"]), from_=start, to=end)


@dataclass(frozen=True)
class SymbolHistory(_Result):
    """``GET /v1/symbols/{symbol}``: every ISIN that carried it, current first."""

    symbol: str
    exchange: str
    periods: list[SymbolPeriod]

    @classmethod
    def from_json(cls, d: Mapping[str, Any], meta: ResponseMeta = _NO_META) -> SymbolHistory:
        return cls(
            symbol=str(d["symbol"]),
            exchange=str(d["exchange"]),
            periods=[SymbolPeriod.from_json(p) for p in d["periods"]],
            meta=meta,
        )


@dataclass(frozen=True)
class ChangesPage(_ListPage[CompanyDetail]):
    """One page of ``GET /v1/companies/changes``; ``sync_token`` on the last page."""

    sync_token: str | None

    _item = CompanyDetail

    @classmethod
    def _fields(cls, d: Mapping[str, Any]) -> dict[str, Any]:
        return {**super()._fields(d), "sync_token": _opt_str(d.get("sync_token"))}


@dataclass(frozen=True)
class Article(_Result):
    """A news article. ``body`` is ``None`` in lists (only the single-article route sends it)."""

    slug: str
    headline: str
    subheadline: str | None
    excerpt: str | None
    body: str | None
    category: str | None
    tags: list[str]
    isin: str | None
    ticker: str | None
    company_name: str | None
    author_name: str | None
    hero_image: str | None
    url: str | None
    published_at: datetime | None
    updated_at: datetime | None

    @classmethod
    def from_json(cls, d: Mapping[str, Any], meta: ResponseMeta = _NO_META) -> Article:
        return cls(
            slug=str(d["slug"]),
            headline=str(d["headline"]),
            subheadline=_opt_str(d.get("subheadline")),
            excerpt=_opt_str(d.get("excerpt")),
            body=_opt_str(d.get("body")),
            category=_opt_str(d.get("category")),
            tags=[str(t) for t in d.get("tags") or []],
            isin=_opt_str(d.get("isin")),
            ticker=_opt_str(d.get("ticker")),
            company_name=_opt_str(d.get("company_name")),
            author_name=_opt_str(d.get("author_name")),
            hero_image=_opt_str(d.get("hero_image")),
            url=_opt_str(d.get("url")),
            published_at=parse_datetime(d.get("published_at")),
            updated_at=parse_datetime(d.get("updated_at")),
            meta=meta,
        )


@dataclass(frozen=True)
class NewsPage(_ListPage[Article]):
    """One page of ``GET /v1/news`` (articles without ``body``)."""

    _item = Article


@dataclass(frozen=True)
class Event:
    """One event of the log or the stream (``V1Event``, contract 11.1).

    ``id`` (``evt_`` and 16 hex digits) increases in commit order across the
    service: pass the last one processed as ``since`` to read what came after.
    ``type`` is ``article.published``, ``article.updated``, ``company.changed``
    or ``ping``; ``data`` is its payload as sent (see :attr:`article`)."""

    id: str
    type: str
    created_at: datetime
    data: dict[str, Any]

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Event:
        data = d.get("data")
        return cls(
            id=str(d["id"]),
            type=str(d["type"]),
            created_at=_req_datetime(d["created_at"]),
            data=dict(data) if isinstance(data, Mapping) else {},
        )

    @property
    def article(self) -> Article | None:
        """The article of an ``article.*`` event (without ``body``), else ``None``."""
        return Article.from_json(self.data) if self.type.startswith("article.") else None


@dataclass(frozen=True)
class EventPage(_ListPage[Event]):
    """One page of ``GET /v1/events``, oldest first."""

    _item = Event


@dataclass(frozen=True)
class UsageWindow:
    """Usage in one billing month."""

    period_start: datetime
    requests: int
    quota: int
    remaining: int

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> UsageWindow:
        return cls(
            period_start=_req_datetime(d["period_start"]),
            requests=int(d["requests"]),
            quota=int(d["quota"]),
            remaining=int(d["remaining"]),
        )


@dataclass(frozen=True)
class Usage(_Result):
    """The calling key's usage record (``GET /v1/usage``)."""

    key_prefix: str
    tier: str
    plan_tier: str
    entitled: bool
    environment: str
    rate_limit_per_minute: int
    current_month: UsageWindow
    history: list[UsageWindow]

    @classmethod
    def from_json(cls, d: Mapping[str, Any], meta: ResponseMeta = _NO_META) -> Usage:
        return cls(
            key_prefix=str(d["key_prefix"]),
            tier=str(d["tier"]),
            plan_tier=str(d["plan_tier"]),
            entitled=bool(d["entitled"]),
            environment=str(d["environment"]),
            rate_limit_per_minute=int(d["rate_limit_per_minute"]),
            current_month=UsageWindow.from_json(d["current_month"]),
            history=[UsageWindow.from_json(w) for w in d.get("history") or []],
            meta=meta,
        )


@dataclass(frozen=True)
class DayUsage:
    """One day of ``GET /v1/usage/daily``."""

    date: date
    requests: int
    not_modified: int
    by_route: dict[str, int]

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> DayUsage:
        day = parse_date(d["date"])
        if day is None:
            raise ValueError("a day without a date")
        return cls(
            date=day,
            requests=int(d["requests"]),
            not_modified=int(d.get("not_modified") or 0),
            by_route={str(k): int(v) for k, v in (d.get("by_route") or {}).items()},
        )


@dataclass(frozen=True)
class DailyUsage(_Result):
    """``GET /v1/usage/daily``: one entry per day of the month up to today."""

    key_prefix: str
    period_start: datetime
    quota: int
    requests: int
    days: list[DayUsage]

    @classmethod
    def from_json(cls, d: Mapping[str, Any], meta: ResponseMeta = _NO_META) -> DailyUsage:
        return cls(
            key_prefix=str(d["key_prefix"]),
            period_start=_req_datetime(d["period_start"]),
            quota=int(d["quota"]),
            requests=int(d["requests"]),
            days=[DayUsage.from_json(x) for x in d.get("days") or []],
            meta=meta,
        )


def _strs(value: Any) -> list[str]:
    return [str(v) for v in value or []]


@dataclass(frozen=True)
class WebhookEndpoint(_Result):
    """A webhook endpoint (``V1WebhookEndpoint``, contract 11.2): where events
    matching its filters are delivered. ``secret`` (``whsec_…``) is set only
    in the answer of a create or a rotation, the only times it is shown."""

    id: str
    url: str
    types: list[str]
    isins: list[str]
    tickers: list[str]
    tags: list[str]
    status: str
    description: str | None
    disabled_reason: str | None
    created_at: datetime
    updated_at: datetime
    secret: str | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, d: Mapping[str, Any], meta: ResponseMeta = _NO_META) -> WebhookEndpoint:
        return cls(
            id=str(d["id"]),
            url=str(d["url"]),
            types=_strs(d.get("types")),
            isins=_strs(d.get("isins")),
            tickers=_strs(d.get("tickers")),
            tags=_strs(d.get("tags")),
            status=str(d["status"]),
            description=_opt_str(d.get("description")),
            disabled_reason=_opt_str(d.get("disabled_reason")),
            created_at=_req_datetime(d["created_at"]),
            updated_at=_req_datetime(d["updated_at"]),
            secret=_opt_str(d.get("secret")),
            meta=meta,
        )

    @classmethod
    def parse_list(
        cls, d: Mapping[str, Any], meta: ResponseMeta = _NO_META
    ) -> list[WebhookEndpoint]:
        return [cls.parse(x, meta) for x in d["data"]]


@dataclass(frozen=True)
class WebhookAttempt:
    """One delivery attempt (``V1WebhookAttempt``): ``status`` the receiver's
    HTTP status, or ``error`` what failed before one."""

    event_id: str
    attempt: int
    attempted_at: datetime
    duration_ms: int
    status: int | None
    error: str | None

    @classmethod
    def parse(cls, d: Mapping[str, Any]) -> WebhookAttempt:
        return cls(
            event_id=str(d["event_id"]),
            attempt=int(d["attempt"]),
            attempted_at=_req_datetime(d["attempted_at"]),
            duration_ms=int(d["duration_ms"]),
            status=None if d.get("status") is None else int(d["status"]),
            error=_opt_str(d.get("error")),
        )

    @classmethod
    def parse_list(
        cls, d: Mapping[str, Any], meta: ResponseMeta = _NO_META
    ) -> list[WebhookAttempt]:
        return [cls.parse(x) for x in d["data"]]
