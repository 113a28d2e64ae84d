"""The requests of the API, built once for both clients: what each method sends
(path, query parameters) and how its answer becomes a typed result. No I/O."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any, Generic, Literal, TypedDict, TypeVar
from urllib.parse import quote

import httpx

from ._core import Secret, decode
from .models import (
    ActionPage,
    Article,
    ChangesPage,
    CompanyActions,
    CompanyDetail,
    CompanyHistory,
    CompanyPage,
    CompanyPrices,
    DailyUsage,
    EventPage,
    MarketDayPage,
    NewsPage,
    ResponseMeta,
    SymbolHistory,
    Usage,
    WebhookAttempt,
    WebhookEndpoint,
)

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover
    from typing_extensions import Unpack

__all__ = [
    "ActionFilters",
    "Call",
    "CompanyFilters",
    "EventFilters",
    "NewsFilters",
    "StreamFilters",
    "Unpack",
]

R = TypeVar("R")


class CompanyFilters(TypedDict, total=False):
    """Filters of ``GET /v1/companies`` (they combine with AND)."""

    letter: str
    industry: str
    exchange: Literal["bse", "nse"]
    market_cap: Literal["large_cap", "mid_cap", "small_cap"]
    search: str
    #: ``relevance`` (the default with ``search``, which it needs) or ``ticker``.
    sort: Literal["relevance", "ticker"]
    ticker: str
    status: Literal["active", "superseded", "delisted", "any"]
    as_of: date | str
    limit: int


class NewsFilters(TypedDict, total=False):
    """Filters of ``GET /v1/news``."""

    isin: str
    ticker: str
    category: str
    tag: str
    published_after: datetime | str
    published_before: datetime | str
    #: Full-text search over headline, subheadline, excerpt and body: words (all
    #: required), ``"a phrase"``, ``prefix*``; case and accents folded.
    q: str
    #: ``relevance`` (the default with ``q``, which it needs) or ``published_at``.
    sort: Literal["relevance", "published_at"]
    limit: int


ActionType = Literal[
    "dividend", "bonus", "split", "consolidation", "rights", "buyback", "demerger", "other"
]


class ActionFilters(TypedDict, total=False):
    """Filters of ``GET /v1/actions``, the calendar (they combine with AND)."""

    ex_date_from: date | str
    """Ex-dates on or after this day."""
    ex_date_to: date | str
    """Ex-dates on or before this day."""
    type: ActionType
    exchange: Literal["bse", "nse"]
    """Only actions this exchange published (one both published passes either)."""
    limit: int


class StreamFilters(TypedDict, total=False):
    """Filters of ``GET /v1/events/stream`` and ``GET /v1/events`` (AND)."""

    types: Sequence[str] | str
    """Only these types (``article.published``, ``article.updated``, ``company.changed``,
    ``corporate_action.added``, ``corporate_action.changed``, ``corporate_action.removed``,
    ``prices.published``)."""
    isin: str
    ticker: str
    tag: str


class EventFilters(StreamFilters, total=False):
    """Filters of ``GET /v1/events``."""

    limit: int


def event_params(filters: Mapping[str, Any]) -> dict[str, Any]:
    """The event routes' filters as sent: ``types`` a comma-separated list."""
    types = filters.get("types")
    if types is None or isinstance(types, str):
        return dict(filters)
    return {**filters, "types": ",".join(types)}


def query(params: Mapping[str, Any]) -> dict[str, str]:
    """Keyword filters to query parameters: ``None`` is left out, bools are lower case."""
    out: dict[str, str] = {}
    for name, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, datetime):
            if value.tzinfo is None or value.utcoffset() is None:
                raise ValueError(f"{name} needs an aware datetime (e.g. tzinfo=timezone.utc)")
            out[name] = value.isoformat()
        elif isinstance(value, date):
            out[name] = value.isoformat()
        else:
            out[name] = str(value)
    return out


@dataclass(frozen=True)
class Call(Generic[R]):
    """One request of the API (a ``GET`` unless ``method`` says): its path, its
    parameters (encoded when sent, so a bad one raises then) and what its JSON
    body is read as."""

    path: str
    parse: Callable[[dict[str, Any], ResponseMeta], R]
    params: Mapping[str, Any] = field(default_factory=dict)
    method: str = "GET"
    body: Mapping[str, Any] | None = None
    """The JSON body of a ``POST`` or ``PATCH``."""

    @property
    def cursor(self) -> str | None:
        """The page of a list this call asks for (``None``: the first)."""
        cursor = self.params.get("cursor")
        return None if cursor is None else str(cursor)

    def at(self, cursor: str | None) -> Call[R]:
        """The same call for the page at ``cursor``."""
        return replace(self, params={**self.params, "cursor": cursor})

    def query(self) -> dict[str, str]:
        """The query string's parameters."""
        return query(self.params)

    def read(self, response: httpx.Response, api_key: Secret) -> R:
        """The result of a final answer; the typed error when it is a problem."""
        return self.parse(*decode(response, api_key))


def companies(*, cursor: str | None = None, **filters: Unpack[CompanyFilters]) -> Call[CompanyPage]:
    """``GET /v1/companies``: one page of companies."""
    return Call("/v1/companies", CompanyPage.from_json, {**filters, "cursor": cursor})


def news(*, cursor: str | None = None, **filters: Unpack[NewsFilters]) -> Call[NewsPage]:
    """``GET /v1/news``: one page of articles, newest first; with ``q`` a full-text
    search, the most relevant first unless ``sort="published_at"``."""
    return Call("/v1/news", NewsPage.from_json, {**filters, "cursor": cursor})


def actions(*, cursor: str | None = None, **filters: Unpack[ActionFilters]) -> Call[ActionPage]:
    """``GET /v1/actions``: one page of the corporate-action calendar, ``ex_date``
    ascending."""
    return Call("/v1/actions", ActionPage.from_json, {**filters, "cursor": cursor})


def company_actions(
    isin: str,
    *,
    type: ActionType | None = None,
    from_: date | str | None = None,
    to: date | str | None = None,
    lineage: bool | None = None,
) -> Call[CompanyActions]:
    """``GET /v1/companies/{isin}/actions``: the company's corporate actions,
    ``ex_date`` descending, with (``lineage``, the server's default) those of the
    ISINs it superseded; ``from_`` and ``to`` bound the ex-dates (inclusive)."""
    path = f"/v1/companies/{quote(isin.strip(), safe='')}/actions"
    params = {"type": type, "from": from_, "to": to, "lineage": lineage}
    return Call(path, CompanyActions.from_json, params)


def company_prices(
    isin: str,
    *,
    from_: date | str | None = None,
    to: date | str | None = None,
    adjust: Literal["none", "split", "total"] | None = None,
    lineage: bool | None = None,
) -> Call[CompanyPrices]:
    """``GET /v1/companies/{isin}/prices``: the company's end-of-day bars,
    oldest first, ``from_`` to ``to`` (inclusive; the server's defaults: the
    last day loaded and a year before it), adjusted as ``adjust`` says
    (``split``, the server's default), with (``lineage``, the default) the bars
    of the ISINs it superseded."""
    path = f"/v1/companies/{quote(isin.strip(), safe='')}/prices"
    params = {"from": from_, "to": to, "adjust": adjust, "lineage": lineage}
    return Call(path, CompanyPrices.from_json, params)


def market_day(
    date: date | str,
    *,
    series: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Call[MarketDayPage]:
    """``GET /v1/prices?date=``: one page of the market on ``date``, every
    security's bar as published, by ISIN then series (only ``series``'s when
    given: ``EQ``, ``BE``, ``SM``, ...)."""
    params = {"date": date, "series": series, "limit": limit, "cursor": cursor}
    return Call("/v1/prices", MarketDayPage.from_json, params)


def events(
    *, since: str | None = None, cursor: str | None = None, **filters: Unpack[EventFilters]
) -> Call[EventPage]:
    """``GET /v1/events``: one page of the event log, oldest first after ``since``."""
    params = {**event_params(filters), "since": since, "cursor": cursor}
    return Call("/v1/events", EventPage.from_json, params)


def company(isin: str, as_of: date | str | None = None) -> Call[CompanyDetail]:
    """``GET /v1/companies/{isin}``: everything known about one company; with
    ``as_of`` (a day from 1990-01-01 up to today), as it stood then."""
    path = f"/v1/companies/{quote(isin.strip(), safe='')}"
    return Call(path, CompanyDetail.from_json, {"as_of": as_of})


def history(isin: str) -> Call[CompanyHistory]:
    """``GET /v1/companies/{isin}/history``: its identity events, oldest first."""
    return Call(f"/v1/companies/{quote(isin.strip(), safe='')}/history", CompanyHistory.from_json)


def symbol(symbol: str, exchange: Literal["nse", "bse"] = "nse") -> Call[SymbolHistory]:
    """``GET /v1/symbols/{symbol}``: every ISIN that carried it, with when."""
    path = f"/v1/symbols/{quote(symbol.strip(), safe='')}"
    return Call(path, SymbolHistory.from_json, {"exchange": exchange})


def article(slug: str) -> Call[Article]:
    """``GET /v1/news/{slug}``: one article, with its body."""
    return Call(f"/v1/news/{quote(slug, safe='')}", Article.from_json)


def usage() -> Call[Usage]:
    """``GET /v1/usage``: this key's tier, limits and requests (free)."""
    return Call("/v1/usage", Usage.from_json)


def usage_daily(month: str | None = None) -> Call[DailyUsage]:
    """``GET /v1/usage/daily``: day by day for ``month`` (``YYYY-MM``, default this month)."""
    return Call("/v1/usage/daily", DailyUsage.from_json, {"month": month})


def changes(
    since: str | None = None, *, cursor: str | None = None, limit: int | None = None
) -> Call[ChangesPage]:
    """One page of ``GET /v1/companies/changes``; the last page has ``sync_token``."""
    params = {"since": since, "cursor": cursor, "limit": limit}
    return Call("/v1/companies/changes", ChangesPage.from_json, params)


def _webhook(endpoint_id: str, tail: str = "") -> str:
    return f"/v1/webhooks/{quote(endpoint_id.strip(), safe='')}{tail}"


def _fields(**fields: Any) -> dict[str, Any]:
    """The given fields of a request body (``None``: not sent)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in fields.items() if v is not None}


def webhook_create(
    url: str,
    *,
    types: Sequence[str] | None = None,
    isins: Sequence[str] | None = None,
    tickers: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    description: str | None = None,
) -> Call[WebhookEndpoint]:
    """``POST /v1/webhooks``: a new endpoint (``https`` only); its ``secret``
    is in this answer only: store it to verify deliveries."""
    body = _fields(
        url=url, types=types, isins=isins, tickers=tickers, tags=tags, description=description
    )
    return Call("/v1/webhooks", WebhookEndpoint.parse, method="POST", body=body)


def webhook_list() -> Call[list[WebhookEndpoint]]:
    """``GET /v1/webhooks``: the account's endpoints."""
    return Call("/v1/webhooks", WebhookEndpoint.parse_list)


def webhook_get(endpoint_id: str) -> Call[WebhookEndpoint]:
    """``GET /v1/webhooks/{id}``."""
    return Call(_webhook(endpoint_id), WebhookEndpoint.parse)


def webhook_update(
    endpoint_id: str,
    *,
    url: str | None = None,
    types: Sequence[str] | None = None,
    isins: Sequence[str] | None = None,
    tickers: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    description: str | None = None,
    status: str | None = None,
) -> Call[WebhookEndpoint]:
    """``PATCH /v1/webhooks/{id}``: the fields given change (``status``:
    ``enabled`` or ``disabled``)."""
    body = _fields(
        url=url,
        types=types,
        isins=isins,
        tickers=tickers,
        tags=tags,
        description=description,
        status=status,
    )
    return Call(_webhook(endpoint_id), WebhookEndpoint.parse, method="PATCH", body=body)


def webhook_delete(endpoint_id: str) -> Call[None]:
    """``DELETE /v1/webhooks/{id}``."""
    return Call(_webhook(endpoint_id), lambda _d, _m: None, method="DELETE")


def webhook_rotate(endpoint_id: str, expires_in: int | None = None) -> Call[WebhookEndpoint]:
    """``POST /v1/webhooks/{id}/rotate-secret``: the new ``secret``; the old
    one keeps signing beside it for ``expires_in`` s (default 86,400)."""
    body = _fields(expires_in=expires_in)
    path = _webhook(endpoint_id, "/rotate-secret")
    return Call(path, WebhookEndpoint.parse, method="POST", body=body)


def webhook_test(endpoint_id: str) -> Call[str]:
    """``POST /v1/webhooks/{id}/test``: queues a ``ping``; its event id."""
    path = _webhook(endpoint_id, "/test")
    return Call(path, lambda d, _m: str(d["event_id"]), method="POST", body={})


def webhook_attempts(endpoint_id: str) -> Call[list[WebhookAttempt]]:
    """``GET /v1/webhooks/{id}/attempts``: the latest delivery attempts."""
    return Call(_webhook(endpoint_id, "/attempts"), WebhookAttempt.parse_list)


def webhook_replay(endpoint_id: str, since: str) -> Call[WebhookEndpoint]:
    """``POST /v1/webhooks/{id}/replay``: queues again what matched after ``since``."""
    path = _webhook(endpoint_id, "/replay")
    return Call(path, WebhookEndpoint.parse, method="POST", body={"since": since})
