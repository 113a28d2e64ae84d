"""mds_client: a Python client for the mds market-data API.

>>> from mds_client import Client
>>> client = Client()                      # MDS_API_KEY, MDS_BASE_URL
>>> page = client.companies(exchange="nse", market_cap="large_cap", limit=5)
>>> banks = client.companies.all(search="bank")
>>> df = client.companies.iter(exchange="bse").to_pandas()   # the pandas extra
>>> for event in client.stream_events(types=["article.published"]): ...
"""

from typing import Any

from . import errors
from ._async import AsyncClient
from ._calls import EventFilters, StreamFilters
from ._core import DEFAULT_BASE_URL, RetryPolicy, __version__
from ._pages import (
    ActionFilters,
    Actions,
    AsyncActions,
    AsyncCompanies,
    AsyncEvents,
    AsyncItems,
    AsyncNews,
    Companies,
    CompanyFilters,
    Events,
    Items,
    News,
    NewsFilters,
    SyncResult,
)
from ._stream import STREAM_SILENCE
from ._sync import Client
from ._webhooks import WebhookVerificationError, verify_webhook
from .errors import *  # noqa: F403 (errors.__all__: every exception class)
from .models import (
    ActionPage,
    Article,
    Bar,
    ChangesPage,
    Classification,
    Company,
    CompanyActions,
    CompanyDetail,
    CompanyHistory,
    CompanyPage,
    CompanyPrices,
    CorporateAction,
    DailyUsage,
    DayUsage,
    Event,
    EventPage,
    Hint,
    IdentityEvent,
    Listing,
    MarketCap,
    MarketDayPage,
    NewsPage,
    PriceAdjustment,
    ResponseMeta,
    SearchMatch,
    SymbolHistory,
    SymbolPeriod,
    Usage,
    UsageWindow,
    WebhookAttempt,
    WebhookEndpoint,
)


def listings_frame(details: "list[CompanyDetail]") -> Any:
    """One row per exchange listing of ``details`` (``exchange``/``status`` as categories)."""
    from ._pandas import listings_frame as _lf

    return _lf(details)


__all__ = [
    "DEFAULT_BASE_URL",
    "STREAM_SILENCE",
    "ActionFilters",
    "ActionPage",
    "Actions",
    "Article",
    "AsyncActions",
    "AsyncClient",
    "AsyncCompanies",
    "AsyncEvents",
    "AsyncItems",
    "AsyncNews",
    "Bar",
    "ChangesPage",
    "Classification",
    "Client",
    "Companies",
    "Company",
    "CompanyActions",
    "CompanyDetail",
    "CompanyFilters",
    "CompanyHistory",
    "CompanyPage",
    "CompanyPrices",
    "CorporateAction",
    "DailyUsage",
    "DayUsage",
    "Event",
    "EventFilters",
    "EventPage",
    "Events",
    "Hint",
    "IdentityEvent",
    "Items",
    "Listing",
    "MarketCap",
    "MarketDayPage",
    "News",
    "NewsFilters",
    "NewsPage",
    "PriceAdjustment",
    "ResponseMeta",
    "RetryPolicy",
    "SearchMatch",
    "StreamFilters",
    "SymbolHistory",
    "SymbolPeriod",
    "SyncResult",
    "Usage",
    "UsageWindow",
    "WebhookAttempt",
    "WebhookEndpoint",
    "WebhookVerificationError",
    "__version__",
    "listings_frame",
    "verify_webhook",
]
__all__ += errors.__all__
