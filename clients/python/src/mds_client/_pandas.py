"""DataFrames with proper dtypes; pandas is the optional ``pandas`` extra."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, fields
from typing import Any

from .models import Article, Bar, Company, CompanyDetail, CorporateAction, Event, Listing

INSTALL_HINT = (
    "pandas is not installed: to_pandas() needs the optional extra, "
    "`pip install 'mds-client[pandas]'` (or `pip install pandas`)"
)

BANDS = ["large_cap", "mid_cap", "small_cap"]
EXCHANGES = ["nse", "bse"]
LISTING_STATUSES = ["active", "suspended", "delisted"]
STATUSES = ["active", "superseded", "delisted"]

#: The ``V1Company`` columns (a search's ``match`` is not one: see
#: :func:`companies_frame`).
COMPANY_COLUMNS = [f.name for f in fields(Company) if f.name != "match"]


def require_pandas() -> Any:
    try:
        import pandas
    except ImportError as exc:  # pragma: no cover - exercised in a venv without pandas
        raise ImportError(INSTALL_HINT) from exc
    return pandas


def _frame(rows: Sequence[Mapping[str, Any]], columns: list[str]) -> Any:
    pd = require_pandas()
    return pd.DataFrame.from_records(list(rows), columns=columns)


def _typed_company_columns(df: Any) -> Any:
    pd = require_pandas()
    for col in ("isin", "ticker", "name", "industry", "sector", "logo_url"):
        df[col] = df[col].astype("string")
    for col in ("is_bse", "is_nse"):
        df[col] = df[col].astype("bool")
    df["market_cap_band"] = pd.Categorical(df["market_cap_band"], categories=BANDS, ordered=True)
    return df


def companies_frame(companies: Iterable[Company]) -> Any:
    """One row per company: string columns, bool ``is_bse``/``is_nse``, an
    ordered category ``market_cap_band`` (large < mid < small as listed); the
    results of a search also ``match_field`` and ``match_value`` (strings)."""
    listed = list(companies)
    rows = [{c: getattr(x, c) for c in COMPANY_COLUMNS} for x in listed]
    df = _typed_company_columns(_frame(rows, COMPANY_COLUMNS))
    if any(x.match is not None for x in listed):
        df["match_field"] = [x.match.field if x.match else None for x in listed]
        df["match_value"] = [x.match.value if x.match else None for x in listed]
        for col in ("match_field", "match_value"):
            df[col] = df[col].astype("string")
    return df


#: The columns :func:`details_frame` adds to the company ones, each with its
#: value for one detail.
DETAIL_EXTRA: dict[str, Callable[[CompanyDetail], Any]] = {
    "exchanges": lambda d: [lst.exchange for lst in d.listings],
    "macro_sector": lambda d: d.classification.macro_sector,
    "basic_industry": lambda d: d.classification.basic_industry,
    "market_cap_inr_crore": lambda d: d.market_cap.inr_crore if d.market_cap else None,
    "market_cap_as_of": lambda d: d.market_cap.as_of if d.market_cap else None,
    "updated_at": lambda d: d.updated_at,
    "status": lambda d: d.status,
    "superseded_by": lambda d: d.superseded_by,
}


def details_frame(details: Iterable[CompanyDetail]) -> Any:
    """Company details, indexed by ISIN: the company columns plus the
    classification levels, the market cap, ``updated_at``, ``status`` (a
    category: active, superseded, delisted) and ``superseded_by``; ``exchanges``
    lists each listing's exchange (NSE first). Listings themselves:
    :func:`listings_frame`."""
    pd = require_pandas()
    rows = [
        {
            **{c: getattr(d, c) for c in COMPANY_COLUMNS},
            **{c: v(d) for c, v in DETAIL_EXTRA.items()},
        }
        for d in details
    ]
    df = _typed_company_columns(_frame(rows, [*COMPANY_COLUMNS, *DETAIL_EXTRA]))
    for col in ("macro_sector", "basic_industry"):
        df[col] = df[col].astype("string")
    df["market_cap_inr_crore"] = df["market_cap_inr_crore"].astype("Float64")
    df["market_cap_as_of"] = pd.to_datetime(df["market_cap_as_of"])
    df["updated_at"] = pd.to_datetime(df["updated_at"], utc=True)
    df["status"] = pd.Categorical(df["status"], categories=STATUSES)
    df["superseded_by"] = df["superseded_by"].astype("string")
    return df.set_index("isin", drop=False).rename_axis(None)


def listings_frame(details: Iterable[CompanyDetail]) -> Any:
    """One row per exchange listing: ``exchange`` and ``status`` as categories."""
    pd = require_pandas()
    cols = ["isin", *(f.name for f in fields(Listing))]
    rows = [{"isin": d.isin, **asdict(lst)} for d in details for lst in d.listings]
    df = _frame(rows, cols)
    for col in ("isin", "symbol", "scrip_code", "series"):
        df[col] = df[col].astype("string")
    df["exchange"] = pd.Categorical(df["exchange"], categories=EXCHANGES)
    df["status"] = pd.Categorical(df["status"], categories=LISTING_STATUSES)
    df["listed_on"] = pd.to_datetime(df["listed_on"])
    df["last_seen"] = pd.to_datetime(df["last_seen"])
    df["face_value"] = df["face_value"].astype("Float64")
    return df


ARTICLE_COLUMNS = [f.name for f in fields(Article) if f.name not in ("meta", "body")]


def articles_frame(articles: Iterable[Article]) -> Any:
    """One row per article (no body): strings, ``category`` as a category,
    ``published_at``/``updated_at`` as UTC datetimes, ``tags`` as lists."""
    pd = require_pandas()
    rows = [{c: getattr(a, c) for c in ARTICLE_COLUMNS} for a in articles]
    df = _frame(rows, ARTICLE_COLUMNS)
    for col in ARTICLE_COLUMNS:
        if col in ("tags", "published_at", "updated_at", "category"):
            continue
        df[col] = df[col].astype("string")
    df["category"] = df["category"].astype("category")
    for col in ("published_at", "updated_at"):
        df[col] = pd.to_datetime(df[col], utc=True)
    return df


EVENT_COLUMNS = [f.name for f in fields(Event)]


def events_frame(events: Iterable[Event]) -> Any:
    """One row per event: ``id`` as a string, ``type`` as a category,
    ``created_at`` as a UTC datetime, ``data`` as the payload's dict."""
    pd = require_pandas()
    df = _frame([{c: getattr(e, c) for c in EVENT_COLUMNS} for e in events], EVENT_COLUMNS)
    df["id"] = df["id"].astype("string")
    df["type"] = df["type"].astype("category")
    df["created_at"] = pd.to_datetime(df["created_at"], utc=True)
    return df


ACTION_TYPES = [
    "dividend",
    "bonus",
    "split",
    "consolidation",
    "rights",
    "buyback",
    "demerger",
    "other",
]
ACTION_COLUMNS = [f.name for f in fields(CorporateAction) if f.name != "figures"]
#: The figures of every type, one column each (null where a type has none).
FIGURE_COLUMNS = [
    "amount",
    "kind",
    "ratio_new",
    "ratio_held",
    "price",
    "face_value_from",
    "face_value_to",
    "new_isin",
]


def actions_frame(actions: Iterable[CorporateAction]) -> Any:
    """One row per corporate action: ``type`` as a category, ``ex_date`` and
    ``record_date`` as datetimes, ``factor`` and the money figures as Float64,
    the ratios as Int64, ``sources`` as lists, and each figure of the action's
    type in its own column (``amount``, ``kind``, ``ratio_new``, ``ratio_held``,
    ``price``, ``face_value_from``, ``face_value_to``, ``new_isin``)."""
    pd = require_pandas()
    rows = [
        {
            **{c: getattr(a, c) for c in ACTION_COLUMNS},
            **{c: a.figures.get(c) for c in FIGURE_COLUMNS},
        }
        for a in actions
    ]
    df = _frame(rows, [*ACTION_COLUMNS, *FIGURE_COLUMNS])
    for col in ("id", "isin", "symbol", "purpose", "kind", "new_isin"):
        df[col] = df[col].astype("string")
    df["type"] = pd.Categorical(df["type"], categories=ACTION_TYPES)
    for col in ("ex_date", "record_date"):
        df[col] = pd.to_datetime(df[col])
    for col in ("factor", "amount", "price", "face_value_from", "face_value_to"):
        df[col] = df[col].astype("Float64")
    for col in ("ratio_new", "ratio_held"):
        df[col] = df[col].astype("Int64")
    return df


BAR_COLUMNS = [f.name for f in fields(Bar)]


def bars_frame(bars: Iterable[Bar]) -> Any:
    """One row per bar, indexed by ``date`` (a DatetimeIndex): the prices,
    ``turnover`` and ``delivery_pct`` as Float64, the counts as Int64,
    ``isin``, ``series`` and ``isin_source`` as strings."""
    pd = require_pandas()
    df = _frame([{c: getattr(b, c) for c in BAR_COLUMNS} for b in bars], BAR_COLUMNS)
    for col in ("isin", "series", "isin_source"):
        df[col] = df[col].astype("string")
    for col in ("open", "high", "low", "close", "last", "prev_close", "turnover", "delivery_pct"):
        df[col] = df[col].astype("Float64")
    for col in ("volume", "trades", "delivery_qty"):
        df[col] = df[col].astype("Int64")
    df["date"] = pd.to_datetime(df["date"])
    return df.set_index("date")


def merge_details(df: Any, details: Sequence[CompanyDetail]) -> Any:
    """``df`` (a :func:`details_frame`, or None) with ``details`` upserted by ISIN."""
    pd = require_pandas()
    fresh = details_frame(details)
    if df is None or len(df) == 0:
        return fresh
    if len(fresh) == 0:
        return df
    kept = df[~df.index.isin(fresh.index)]
    return pd.concat([kept, fresh]).sort_index()


def frame_of(model: type[Any], items: Sequence[Any]) -> Any:
    """``items`` (all of the class ``model``) as the DataFrame of that model."""
    framers: dict[type[Any], Callable[[Sequence[Any]], Any]] = {
        Company: companies_frame,
        CompanyDetail: details_frame,
        Article: articles_frame,
        Event: events_frame,
        CorporateAction: actions_frame,
        Bar: bars_frame,
    }
    return framers[model](items)
