"""Typed results for every response of the mds contract.

Every optional field of the wire format is ``None`` when the server sends
``null`` (or, for article ``body`` in lists, omits it). Timestamps are aware
:class:`datetime.datetime` objects in UTC; calendar dates are
:class:`datetime.date`. Unknown fields are ignored, so a newer server does not
break an older client.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from datetime import date, datetime, timezone
from typing import Any, ClassVar, Generic, TypeVar, get_args, get_origin, get_type_hints

import httpx

__all__ = [
    "ActionPage",
    "Article",
    "ChangesPage",
    "Classification",
    "Company",
    "CompanyActions",
    "CompanyDetail",
    "CompanyHistory",
    "CompanyPage",
    "CorporateAction",
    "DailyUsage",
    "DayUsage",
    "Event",
    "EventPage",
    "IdentityEvent",
    "Listing",
    "MarketCap",
    "MarketDayPage",
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


def _req_date(value: Any) -> date:
    parsed = parse_date(value)
    if parsed is None:
        raise ValueError("a required date is null")
    return parsed


Reader = Callable[[Mapping[str, Any]], Any]
"""Reads one field's value from a JSON object."""

#: How a JSON value becomes a field's value, by the field's type (a model
#: class: by its ``from_json``).
_CONVERTERS: dict[Any, Callable[[Any], Any]] = {
    str: str,
    int: int,
    float: float,
    bool: bool,
    datetime: _req_datetime,
    date: _req_date,
    Any: lambda value: value,
}


def _converter(hint: Any) -> Callable[[Any], Any]:
    convert = _CONVERTERS.get(hint) or getattr(hint, "from_json", None)
    return convert or functools.partial(_unreadable, hint)


def _unreadable(hint: Any, value: Any) -> Any:
    raise TypeError(f"a field of type {hint} is given, not read from JSON")


def _reader(name: str, hint: Any, default: Any) -> Reader:
    """How a field of type ``hint`` is read from the JSON key ``name``: a list
    or a dict missing or null is empty; an optional field (``X | None``) is
    ``None`` then; a field with a ``default`` has it then; any other field is
    required."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is list:
        item = _converter(args[0])
        return lambda d: [item(x) for x in d.get(name) or []]
    if origin is dict:
        value = _converter(args[1])
        return lambda d: {str(k): value(v) for k, v in _mapping(d.get(name)).items()}
    if type(None) in args:
        (inner,) = (a for a in args if a is not type(None))
        convert = _converter(inner)
        return lambda d: None if d.get(name) is None else convert(d[name])
    convert = _converter(hint)
    if default is not MISSING:
        return lambda d: default if d.get(name) is None else convert(d[name])
    return lambda d: convert(d[name])


def _mapping(value: Any) -> Mapping[Any, Any]:
    return value if isinstance(value, Mapping) else {}


_READERS: dict[type[Any], dict[str, Reader]] = {}


def _readers(cls: type[Any]) -> dict[str, Reader]:
    """The reader of each field of the dataclass ``cls``: from the JSON key
    its metadata names as ``json`` (else its own name), with the value its
    metadata names as ``missing`` (else its default) when that key is missing
    or null."""
    if cls not in _READERS:
        hints = get_type_hints(cls)
        _READERS[cls] = {
            f.name: _reader(
                f.metadata.get("json", f.name), hints[f.name], f.metadata.get("missing", f.default)
            )
            for f in fields(cls)
        }
    return _READERS[cls]


M = TypeVar("M")


def _decode(cls: type[M], d: Mapping[str, Any], **known: Any) -> M:
    """The dataclass ``cls`` from the JSON object ``d``: the fields in ``known``
    as given, every other one read by its type (:func:`_reader`); unknown keys
    are ignored."""
    read = {name: reader(d) for name, reader in _readers(cls).items() if name not in known}
    return cls(**read, **known)


class _Model:
    """A model read from JSON by its fields' types."""

    @classmethod
    def from_json(cls: type[M], d: Mapping[str, Any]) -> M:
        """The model of the JSON object ``d``."""
        return _decode(cls, d)


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

    @classmethod
    def from_json(cls: type[M], d: Mapping[str, Any], meta: ResponseMeta = _NO_META) -> M:
        """The response of the JSON object ``d``, with its ``meta``."""
        return _decode(cls, d, meta=meta)

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
class SearchMatch(_Model):
    """What a search matched in a company (``V1SearchMatch``): ``field`` is
    ``ticker``, ``name``, ``former_ticker`` or ``former_name``; ``value`` the
    matched value (the former one for ``former_*``)."""

    field: str
    value: str


@dataclass(frozen=True)
class Company(_Model):
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
    #: On each result of a search (``search=``), what it matched; else ``None``.
    match: SearchMatch | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class Hint(_Model):
    """On an empty page whose exact-match filter (``industry``, ``category``,
    ``tag``) names a value that does not exist: the parameter and up to 5
    existing values nearest to it (``V1Hint``)."""

    param: str
    nearest: list[str]


@dataclass(frozen=True)
class _ListPage(_Result, Generic[T]):
    """One page of a list: its items, and where the next page starts."""

    data: list[T]
    has_more: bool
    next_cursor: str | None
    #: See :class:`Hint`; ``None`` on every other page.
    hint: Hint | None = field(default=None, kw_only=True)

    _item: ClassVar[Any]  # the items' model (``T``): their from_json, and their DataFrame

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            if get_origin(base) is _ListPage:
                cls._item = get_args(base)[0]

    @classmethod
    def from_json(cls: type[LP], d: Mapping[str, Any], meta: ResponseMeta = _NO_META) -> LP:
        """The page of the JSON object ``d``, with its ``meta``."""
        return _decode(cls, d, meta=meta, data=[cls._item.from_json(x) for x in d["data"]])

    def __iter__(self) -> Iterator[T]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def to_pandas(self) -> Any:
        """The page as a DataFrame (needs the ``pandas`` extra)."""
        from ._pandas import frame_of

        return frame_of(self._item, self.data)


LP = TypeVar("LP", bound=_ListPage[Any])


class CompanyPage(_ListPage[Company]):
    """One page of ``GET /v1/companies``."""


@dataclass(frozen=True)
class Listing(_Model):
    """One exchange listing of a company (``V1CompanyDetail.listings``)."""

    exchange: str
    symbol: str
    scrip_code: str | None
    series: str | None
    listed_on: date | None
    face_value: float | None
    status: str
    #: The day of the latest snapshot of its exchange's list that showed it.
    last_seen: date | None = None


@dataclass(frozen=True)
class Classification:
    """The four classification levels NSE and BSE share; each ``None`` when unknown."""

    macro_sector: str | None
    sector: str | None
    industry: str | None
    basic_industry: str | None

    @classmethod
    def from_json(cls, d: Mapping[str, Any] | None) -> Classification:
        """The levels of the JSON object ``d`` (none known when ``d`` is ``None``)."""
        return _decode(cls, d or {})


@dataclass(frozen=True)
class MarketCap:
    """The market capitalisation a company's band was ranked on, and its day."""

    inr_crore: float
    as_of: date | None

    @classmethod
    def from_json(cls, d: Mapping[str, Any] | None) -> MarketCap | None:
        return None if d is None else _decode(cls, d)


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
        """The detail of the JSON object ``d``, with its ``meta``."""
        classification = Classification.from_json(d.get("classification"))
        return _decode(cls, d, meta=meta, classification=classification)


@dataclass(frozen=True)
class IdentityEvent(_Model):
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
        """The event of the JSON object ``d``: every key but its type, date and
        exactness is one of its ``fields``."""
        rest = {k: v for k, v in d.items() if k not in ("type", "date", "exact")}
        return _decode(cls, d, fields=rest)


@dataclass(frozen=True)
class CompanyHistory(_Result):
    """``GET /v1/companies/{isin}/history``: the ISIN's events, oldest first."""

    isin: str
    events: list[IdentityEvent]


@dataclass(frozen=True)
class SymbolPeriod(_Model):
    """When an ISIN carried a symbol: ``[from_, to)``, ``to`` ``None`` while current."""

    isin: str
    name: str
    from_: date = field(metadata={"json": "from"})
    to: date | None


@dataclass(frozen=True)
class SymbolHistory(_Result):
    """``GET /v1/symbols/{symbol}``: every ISIN that carried it, current first."""

    symbol: str
    exchange: str
    periods: list[SymbolPeriod]


@dataclass(frozen=True)
class ChangesPage(_ListPage[CompanyDetail]):
    """One page of ``GET /v1/companies/changes``; ``sync_token`` on the last page."""

    sync_token: str | None


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


class NewsPage(_ListPage[Article]):
    """One page of ``GET /v1/news`` (articles without ``body``)."""


@dataclass(frozen=True)
class Event(_Model):
    """One event of the log or the stream (``V1Event``, contract 11.1).

    ``id`` (``evt_`` and 16 hex digits) increases in commit order across the
    service: pass the last one processed as ``since`` to read what came after.
    ``type`` is ``article.published``, ``article.updated``, ``company.changed``,
    ``corporate_action.added``, ``corporate_action.changed``,
    ``corporate_action.removed`` (``data``: ``action``, the action as last
    stored, and ``replaced_by``, the ids now holding its publications),
    ``prices.published`` or ``ping``; ``data`` is its payload as sent (see
    :attr:`article` and :attr:`action`)."""

    id: str
    type: str
    created_at: datetime
    data: dict[str, Any]

    @property
    def article(self) -> Article | None:
        """The article of an ``article.*`` event (without ``body``), else ``None``."""
        return Article.from_json(self.data) if self.type.startswith("article.") else None

    @property
    def action(self) -> CorporateAction | None:
        """The action of a ``corporate_action.*`` event (for ``removed``, as it
        was last stored), else ``None``."""
        if self.type == "corporate_action.removed":
            return CorporateAction.from_json(self.data["action"])
        if self.type.startswith("corporate_action."):
            return CorporateAction.from_json(self.data)
        return None


class EventPage(_ListPage[Event]):
    """One page of ``GET /v1/events``, oldest first."""


@dataclass(frozen=True)
class CorporateAction(_Model):
    """One corporate action (``V1CorporateAction``, contract 13.2): ``type`` is
    ``dividend``, ``bonus``, ``split``, ``consolidation``, ``rights``,
    ``buyback``, ``demerger`` or ``other``; the figures of its type (the
    object the wire names by the type: ``amount`` and ``kind`` of a dividend,
    ``ratio_new``/``ratio_held``, ``price``, ``face_value_from``/
    ``face_value_to``/``new_isin``) are in ``figures`` (empty for a demerger
    or other). ``factor``: a price before ``ex_date`` times it is comparable
    with one after (``None`` while unknown)."""

    id: str
    isin: str
    symbol: str
    type: str
    ex_date: date
    record_date: date | None
    purpose: str
    sources: list[str]
    factor: float | None
    figures: dict[str, Any]

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CorporateAction:
        """The action of the JSON object ``d``: the object named by its type
        is its ``figures``."""
        return _decode(cls, d, figures=dict(_mapping(d.get(str(d["type"])))))


class ActionPage(_ListPage[CorporateAction]):
    """One page of ``GET /v1/actions`` (the calendar), ``ex_date`` ascending."""


@dataclass(frozen=True)
class CompanyActions(_Result):
    """``GET /v1/companies/{isin}/actions``: its actions (with its lineage's,
    unless asked without), ``ex_date`` descending."""

    isin: str
    data: list[CorporateAction]

    def __iter__(self) -> Iterator[CorporateAction]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def to_pandas(self) -> Any:
        """The actions as a DataFrame (needs the ``pandas`` extra)."""
        from ._pandas import actions_frame

        return actions_frame(self.data)


@dataclass(frozen=True)
class Bar(_Model):
    """One end-of-day bar (``V1Bar``, contract 14.2): prices in rupees as
    published (adjusted ones rounded to four decimals), ``volume`` in shares,
    ``turnover`` in rupees; ``last``, ``delivery_qty`` and ``delivery_pct`` are
    ``None`` when the day's file has none; ``isin_source`` is ``file`` (the file
    named the ISIN) or ``symbol`` (resolved from the symbol that day)."""

    date: date
    isin: str
    series: str
    open: float
    high: float
    low: float
    close: float
    last: float | None
    prev_close: float
    volume: int
    turnover: float
    trades: int
    delivery_qty: int | None
    delivery_pct: float | None
    isin_source: str


@dataclass(frozen=True)
class PriceAdjustment(_Model):
    """An action applied to a series' bars before ``ex_date``: their prices
    times ``factor`` (volumes divided by it for splits and bonuses), so it can
    be undone."""

    action_id: str
    ex_date: date
    type: str
    factor: float


@dataclass(frozen=True)
class CompanyPrices(_Result):
    """``GET /v1/companies/{isin}/prices``: the bars, oldest first (through the
    ISINs it superseded, unless asked without), adjusted as ``adjust`` says
    (``none``, ``split`` or ``total``), and the ``adjustments`` applied."""

    isin: str
    adjust: str
    bars: list[Bar]
    adjustments: list[PriceAdjustment]

    def __iter__(self) -> Iterator[Bar]:
        return iter(self.bars)

    def __len__(self) -> int:
        return len(self.bars)

    def to_pandas(self) -> Any:
        """The bars as a DataFrame indexed by ``date`` (needs the ``pandas``
        extra)."""
        from ._pandas import bars_frame

        return bars_frame(self.bars)


@dataclass(frozen=True)
class MarketDayPage(_ListPage[Bar]):
    """One page of ``GET /v1/prices?date=`` (the market on ``date``): bars as
    published, by ISIN then series."""

    date: date


@dataclass(frozen=True)
class UsageWindow(_Model):
    """Usage in one billing month."""

    period_start: datetime
    requests: int
    quota: int
    remaining: int


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


@dataclass(frozen=True)
class DayUsage(_Model):
    """One day of ``GET /v1/usage/daily``."""

    date: date
    requests: int
    not_modified: int = field(metadata={"missing": 0})
    by_route: dict[str, int]


@dataclass(frozen=True)
class DailyUsage(_Result):
    """``GET /v1/usage/daily``: one entry per day of the month up to today."""

    key_prefix: str
    period_start: datetime
    quota: int
    requests: int
    days: list[DayUsage]


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
        """The endpoint of the JSON object ``d``, with its ``meta``."""
        return _decode(cls, d, meta=meta)

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
        """The attempt of the JSON object ``d``."""
        return _decode(cls, d)

    @classmethod
    def parse_list(
        cls, d: Mapping[str, Any], meta: ResponseMeta = _NO_META
    ) -> list[WebhookAttempt]:
        return [cls.parse(x) for x in d["data"]]
