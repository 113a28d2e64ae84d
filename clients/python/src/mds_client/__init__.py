"""mds_client: a Python client for the mds market-data API.

>>> from mds_client import Client
>>> client = Client()                      # MDS_API_KEY, MDS_BASE_URL
>>> page = client.companies(exchange="nse", market_cap="large_cap", limit=5)
>>> banks = client.companies.all(search="bank")
>>> df = client.companies.iter(exchange="bse").to_pandas()   # the pandas extra
"""

from typing import Any

from ._async import AsyncClient, AsyncCompanies, AsyncNews
from ._core import DEFAULT_BASE_URL, RetryPolicy, __version__
from ._pages import AsyncItems, CompanyFilters, Items, NewsFilters, SyncResult
from ._sync import Client, Companies, News
from .errors import (
    APIError,
    AuthenticationError,
    InvalidRequestError,
    MdsError,
    NotFoundError,
    RateLimitError,
    ServerError,
    SyncTokenExpiredError,
    TransportError,
    UnavailableError,
)
from .models import (
    Article,
    ChangesPage,
    Classification,
    Company,
    CompanyDetail,
    CompanyHistory,
    CompanyPage,
    DailyUsage,
    DayUsage,
    IdentityEvent,
    Listing,
    MarketCap,
    NewsPage,
    ResponseMeta,
    SymbolHistory,
    SymbolPeriod,
    Usage,
    UsageWindow,
)


def listings_frame(details: "list[CompanyDetail]") -> Any:
    """One row per exchange listing of ``details`` (``exchange``/``status`` as categories)."""
    from ._pandas import listings_frame as _lf

    return _lf(details)


__all__ = [
    "DEFAULT_BASE_URL",
    "APIError",
    "Article",
    "AsyncClient",
    "AsyncCompanies",
    "AsyncItems",
    "AsyncNews",
    "AuthenticationError",
    "ChangesPage",
    "Classification",
    "Client",
    "Companies",
    "Company",
    "CompanyDetail",
    "CompanyFilters",
    "CompanyHistory",
    "CompanyPage",
    "DailyUsage",
    "DayUsage",
    "IdentityEvent",
    "InvalidRequestError",
    "Items",
    "Listing",
    "MarketCap",
    "MdsError",
    "News",
    "NewsFilters",
    "NewsPage",
    "NotFoundError",
    "RateLimitError",
    "ResponseMeta",
    "RetryPolicy",
    "ServerError",
    "SymbolHistory",
    "SymbolPeriod",
    "SyncResult",
    "SyncTokenExpiredError",
    "TransportError",
    "UnavailableError",
    "Usage",
    "UsageWindow",
    "__version__",
    "listings_frame",
]
