"""Routes of the contract (API.md sections 7 and 8) that another change is adding
to the server: company detail, the change feed and the sync helper, the news
list, daily usage. Each test runs against the real server and skips cleanly
while the route answers 404; the shapes are also checked against the contract
with a tiny fake, which needs no server."""

from __future__ import annotations

import asyncio
import csv
import json
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest

from mds_client import (
    Article,
    AsyncClient,
    ChangesPage,
    Client,
    CompanyDetail,
    DailyUsage,
    InvalidRequestError,
    NewsPage,
    NotFoundError,
    listings_frame,
)

from .conftest import Server, skip_if_unserved

pytestmark = pytest.mark.unserved

RELIANCE = "INE002A01018"


# --- against the real server (skipped while the route is not served) -------


def test_company_detail(client: Client) -> None:
    listed = client.companies.all(ticker="RELIANCE")
    assert listed
    isin = listed[0].isin
    detail = skip_if_unserved(lambda: client.company(isin.lower()))
    assert isinstance(detail, CompanyDetail)
    assert detail.isin == isin and detail.ticker == listed[0].ticker
    assert detail.is_nse == listed[0].is_nse and detail.market_cap_band == listed[0].market_cap_band
    assert detail.updated_at is None or detail.updated_at.tzinfo is not None
    assert [lst.exchange for lst in detail.listings] == sorted(
        (lst.exchange for lst in detail.listings), key=lambda e: e != "nse"
    )
    assert detail.remaining is not None
    with pytest.raises(NotFoundError):
        client.company("INE000000000")


def test_news_list(client: Client) -> None:
    page = skip_if_unserved(lambda: client.news(limit=10))
    assert isinstance(page, NewsPage) and len(page.data) == 10
    assert all(a.body is None for a in page.data)
    every = client.news.all(limit=7)
    assert len(every) == 50 and len({a.slug for a in every}) == 50
    assert every == client.news.all(limit=200)
    dated = [a.published_at for a in every if a.published_at is not None]
    assert dated == sorted(dated, reverse=True)
    with_tag = next(a for a in every if a.tags)
    tagged = client.news.all(tag=with_tag.tags[0])
    assert tagged and all(with_tag.tags[0] in a.tags for a in tagged)
    cutoff = dated[len(dated) // 2]
    after = client.news.all(published_after=cutoff)
    assert all(a.published_at is not None and a.published_at > cutoff for a in after)
    with pytest.raises(InvalidRequestError):
        client.news(isin="not-an-isin")


def test_usage_daily(client: Client) -> None:
    client.companies(limit=1)
    daily = skip_if_unserved(lambda: client.usage_daily())
    assert isinstance(daily, DailyUsage)
    today = datetime.now(timezone.utc).date()
    assert daily.days[-1].date == today and daily.days[0].date.day == 1
    assert sum(d.requests for d in daily.days) == daily.requests
    with pytest.raises(InvalidRequestError):
        client.usage_daily(month="1999-01")


def test_sync_helper_across_a_real_import(server: Server, client: Client) -> None:
    store: dict[str, CompanyDetail] = {}
    first = skip_if_unserved(lambda: client.sync(store))
    assert first.from_scratch and len(store) == len(client.companies.all(limit=200))
    again = client.sync(store, first.sync_token)
    assert again.changed == []

    target = store[sorted(store)[0]]
    path = server.workdir / "rename.csv"
    fields = ["isin", "ticker", "name", "industry", "sector", "is_bse", "is_nse",
              "market_cap_band", "logo_url"]  # fmt: skip
    row = {f: getattr(target, f) for f in fields}
    row["name"] = target.name + " (renamed by pytest)"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerow({k: ("" if v is None else str(v).lower() if isinstance(v, bool) else v)
                    for k, v in row.items()})  # fmt: skip
    server.mds("import", "companies", str(path))
    delta = client.sync(store, again.sync_token)
    assert [d.isin for d in delta.changed] == [target.isin]
    assert store[target.isin].name == row["name"]
    assert not delta.from_scratch

    pytest.importorskip("pandas")
    df, token = client.sync_frame(None)
    assert len(df) == len(store) and df.loc[target.isin, "name"] == row["name"]
    df2, _ = client.sync_frame(df, token)
    assert df2.equals(df)


def test_async_unserved_routes(server: Server, api_key: str) -> None:
    async def main() -> Any:
        async with AsyncClient(api_key=api_key, base_url=server.base_url) as ac:
            return await ac.news(limit=3)

    page = skip_if_unserved(lambda: asyncio.run(main()))
    assert isinstance(page, NewsPage)


# --- the shapes of the contract, against a tiny fake ------------------------

DETAIL = {
    "isin": RELIANCE, "ticker": "RELIANCE", "name": "Reliance Industries Ltd",
    "industry": "Refineries", "sector": "Oil & Gas", "is_bse": True, "is_nse": True,
    "market_cap_band": "large_cap", "logo_url": None,
    "listings": [
        {"exchange": "nse", "symbol": "RELIANCE", "scrip_code": None, "series": "EQ",
         "listed_on": "1995-11-29", "face_value": 10, "status": "active"},
        {"exchange": "bse", "symbol": "RELIANCE", "scrip_code": "500325", "series": "A",
         "listed_on": None, "face_value": 10.0, "status": "active"},
    ],
    "classification": {"macro_sector": "Energy", "sector": "Oil Gas", "industry": "Petroleum",
                       "basic_industry": None},
    "market_cap": {"inr_crore": 1900000.5, "as_of": "2024-03-28"},
    "updated_at": "2026-11-01T10:00:00+00:00",
}  # fmt: skip


def fake_feed() -> httpx.MockTransport:
    """A change feed of two pages, then a delta of one renamed company."""
    other = {**DETAIL, "isin": "INE467B01029", "ticker": "TCS", "name": "TCS", "market_cap": None,
             "listings": [], "classification": {}}  # fmt: skip
    renamed = {**DETAIL, "name": "Reliance (renamed)"}

    def handler(request: httpx.Request) -> httpx.Response:
        q = request.url.params
        assert request.headers["authorization"] == "Bearer k"
        if request.url.path != "/v1/companies/changes":
            return httpx.Response(404, json={"code": "not_found", "status": 404, "detail": "x"})
        since, cursor = q.get("since"), q.get("cursor")
        if since is None and cursor is None:
            body = {"data": [DETAIL], "has_more": True, "next_cursor": "c1", "sync_token": None}
        elif since is None and cursor == "c1":
            body = {"data": [other], "has_more": False, "next_cursor": None, "sync_token": "t1"}
        elif since == "t1":
            body = {"data": [renamed], "has_more": False, "next_cursor": None, "sync_token": "t2"}
        elif since == "t2":
            body = {"data": [], "has_more": False, "next_cursor": None, "sync_token": "t2"}
        else:
            return httpx.Response(
                410,
                json={
                    "code": "sync_token_expired",
                    "status": 410,
                    "detail": "sync from scratch",
                    "param": "since",
                    "request_id": "r",
                },  # fmt: skip
            )
        return httpx.Response(200, content=json.dumps(body), headers={"X-RateLimit-Remaining": "9"})

    return httpx.MockTransport(handler)


def test_contract_shapes_and_sync_with_a_fake() -> None:
    c = Client(api_key="k", base_url="http://fake", transport=fake_feed())
    page = c.changes()
    assert isinstance(page, ChangesPage) and page.sync_token is None and page.remaining == 9
    d = page.data[0]
    assert d.listings[0].exchange == "nse" and d.listings[0].scrip_code is None
    assert d.listings[0].listed_on is not None and d.listings[0].listed_on.year == 1995
    assert d.listings[1].face_value == 10.0 and d.classification.basic_industry is None
    assert d.market_cap is not None and d.market_cap.inr_crore == 1900000.5
    assert d.updated_at == datetime(2026, 11, 1, 10, tzinfo=timezone.utc)

    store: dict[str, CompanyDetail] = {}
    first = c.sync(store)
    assert first.sync_token == "t1" and set(store) == {RELIANCE, "INE467B01029"}
    delta = c.sync(store, first.sync_token)
    assert delta.sync_token == "t2" and store[RELIANCE].name == "Reliance (renamed)"
    assert c.sync(store, "t2").changed == []
    # an expired token starts over, from scratch
    expired = c.sync(store, "old")
    assert expired.from_scratch and expired.sync_token == "t1" and len(store) == 2

    pd = pytest.importorskip("pandas")
    df, token = c.sync_frame(None)
    assert token == "t1" and list(df.index) == [RELIANCE, "INE467B01029"]
    df, token = c.sync_frame(df, token)
    assert token == "t2" and df.loc[RELIANCE, "name"] == "Reliance (renamed)" and len(df) == 2
    assert isinstance(df["updated_at"].dtype, pd.DatetimeTZDtype)
    assert df["market_cap_inr_crore"].dtype == "Float64"
    lf = listings_frame(list(store.values()))
    assert isinstance(lf["exchange"].dtype, pd.CategoricalDtype)
    assert list(lf["exchange"].cat.categories) == ["nse", "bse"]


def test_contract_shapes_of_news_and_daily_usage_with_a_fake() -> None:
    article = {"slug": "a-1", "headline": "H", "subheadline": None, "excerpt": None,
               "category": "results", "tags": ["q2"], "isin": RELIANCE, "ticker": "RELIANCE",
               "company_name": None, "author_name": None, "hero_image": None, "url": None,
               "published_at": "2026-11-02T09:30:00Z", "updated_at": None}  # fmt: skip
    day = {"date": "2026-11-01", "requests": 2, "not_modified": 1,
           "by_route": {"/v1/companies": 2, "/v1/news": 0}}  # fmt: skip

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/news":
            assert request.url.params["published_after"] == "2026-11-01T00:00:00+00:00"
            return httpx.Response(
                200, json={"data": [article], "has_more": False, "next_cursor": None}
            )
        assert request.url.params["month"] == "2026-11"
        return httpx.Response(
            200,
            json={
                "key_prefix": "mds_live_abc",
                "period_start": "2026-11-01T00:00:00+00:00",
                "quota": 10,
                "requests": 2,
                "days": [day],
            },  # fmt: skip
        )

    c = Client(api_key="k", base_url="http://fake", transport=httpx.MockTransport(handler))
    news = c.news(published_after=datetime(2026, 11, 1, tzinfo=timezone.utc))
    a = news.data[0]
    assert isinstance(a, Article) and a.body is None and a.tags == ["q2"]
    assert a.published_at == datetime(2026, 11, 2, 9, 30, tzinfo=timezone.utc)
    assert a.published_at.utcoffset() == timedelta(0)
    daily = c.usage_daily(month="2026-11")
    assert daily.days[0].by_route["/v1/companies"] == 2 and daily.days[0].not_modified == 1
    pd = pytest.importorskip("pandas")
    df = news.to_pandas()
    assert isinstance(df["published_at"].dtype, pd.DatetimeTZDtype)
    assert isinstance(df["category"].dtype, pd.CategoricalDtype)


def test_naive_datetimes_are_refused_before_sending() -> None:
    c = Client(
        api_key="k",
        base_url="http://fake",
        transport=httpx.MockTransport(lambda r: httpx.Response(500)),
    )
    with pytest.raises(ValueError, match="published_after needs an aware datetime"):
        c.news(published_after=datetime(2026, 11, 1))
