"""Routes of the contract (API.md sections 7.3 and 8): the news list and daily
usage, against the real server (the skip on 404 is kept for an older server),
and their shapes against the contract with a tiny fake, which needs no server.
(Company detail and the change feed: tests/test_changes.py.)"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest

from mds_client import (
    Article,
    AsyncClient,
    Client,
    DailyUsage,
    InvalidRequestError,
    NewsPage,
)

from .conftest import Server

pytestmark = pytest.mark.unserved

RELIANCE = "INE002A01018"


# --- against the real server (skipped while the route is not served) -------


def test_news_list(client: Client) -> None:
    page = client.news(limit=10)
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
    daily = client.usage_daily()  # served: no skip
    assert isinstance(daily, DailyUsage)
    today = datetime.now(timezone.utc).date()
    assert daily.days[-1].date == today and daily.days[0].date.day == 1
    assert sum(d.requests for d in daily.days) == daily.requests
    with pytest.raises(InvalidRequestError):
        client.usage_daily(month="1999-01")


def test_async_news_list(server: Server, api_key: str) -> None:
    async def main() -> Any:
        async with AsyncClient(api_key=api_key, base_url=server.base_url) as ac:
            return await ac.news(limit=3)

    page = asyncio.run(main())
    assert isinstance(page, NewsPage) and len(page.data) == 3


# --- the shapes of the contract, against a tiny fake ------------------------


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
