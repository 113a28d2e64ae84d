"""GET /v1/companies against the real server: pages, iteration, filters, async, pandas."""

from __future__ import annotations

import asyncio

import httpx
import pytest

import mds_client
from mds_client import AsyncClient, Client, Company, CompanyPage

from .conftest import Server


def raw_walk(server: Server, key: str, limit: int, **filters: str) -> list[dict[str, object]]:
    """The list walk by hand, over plain HTTP: follow next_cursor to the end."""
    rows: list[dict[str, object]] = []
    params: dict[str, str | int] = {"limit": limit, **filters}
    with httpx.Client(base_url=server.base_url, headers={"Authorization": f"Bearer {key}"}) as h:
        while True:
            body = h.get("/v1/companies", params=params).raise_for_status().json()
            rows.extend(body["data"])
            if not body["has_more"]:
                assert body["next_cursor"] is None
                return rows
            params["cursor"] = body["next_cursor"]


def test_one_page_is_typed_and_carries_rate_limit_headers(client: Client) -> None:
    page = client.companies(limit=7)
    assert isinstance(page, CompanyPage)
    assert len(page.data) == 7 and all(isinstance(c, Company) for c in page.data)
    assert page.has_more is True and isinstance(page.next_cursor, str)
    c = page.data[0]
    assert len(c.isin) == 12 and isinstance(c.is_bse, bool) and isinstance(c.is_nse, bool)
    assert c.market_cap_band in (None, "large_cap", "mid_cap", "small_cap")
    assert page.meta.limit == 600
    assert isinstance(page.remaining, int) and 0 <= page.remaining < 600
    assert isinstance(page.reset, int) and page.reset >= 0
    assert page.request_id and page.meta.ratelimit_policy


def test_nulls_are_none(client: Client) -> None:
    every = client.companies.all(limit=200)
    assert any(c.market_cap_band is None for c in every)
    assert all(c.logo_url is None or isinstance(c.logo_url, str) for c in every)


def test_iteration_over_the_whole_demo_set_equals_a_list_walk(
    server: Server, client: Client, api_key: str
) -> None:
    walked = raw_walk(server, api_key, 200)
    assert len(walked) > 4000
    every = client.companies.all(limit=200)
    assert [c.isin for c in every] == [r["isin"] for r in walked]
    assert every == [Company.from_json(r) for r in walked]
    # another page size gives the same sequence; no duplicates, ticker-then-ISIN order
    odd = list(client.companies.iter(limit=137))
    assert odd == every
    assert len({c.isin for c in every}) == len(every)
    assert [(c.ticker, c.isin) for c in every] == sorted((c.ticker, c.isin) for c in every)
    pages = list(client.companies.pages(limit=200))
    assert sum(len(p.data) for p in pages) == len(every)
    assert pages[-1].has_more is False and pages[-1].next_cursor is None
    assert all(p.remaining is not None for p in pages)


def test_iteration_starts_from_a_given_cursor(client: Client) -> None:
    first = client.companies(limit=50, exchange="nse")
    rest = client.companies.iter(cursor=first.next_cursor, limit=50, exchange="nse").all()
    assert first.data + rest == client.companies.all(limit=200, exchange="nse")


def test_filters(server: Server, client: Client, api_key: str) -> None:
    nse = client.companies.all(exchange="nse", limit=200)
    assert nse and all(c.is_nse for c in nse)
    bse = client.companies.all(exchange="bse", limit=200)
    assert bse and all(c.is_bse for c in bse)
    large = client.companies.all(market_cap="large_cap", limit=200)
    assert 0 < len(large) <= 100 and all(c.market_cap_band == "large_cap" for c in large)
    assert [c.isin for c in large] == [
        r["isin"] for r in raw_walk(server, api_key, 200, market_cap="large_cap")
    ]
    banks = client.companies.all(search="bank")
    assert banks and all("bank" in (c.name + c.ticker).lower() for c in banks)
    a = client.companies.all(letter="a", limit=200)
    assert a and all(c.ticker.startswith("A") for c in a)
    industry = next(c.industry for c in large if c.industry)
    same = client.companies.all(industry=industry, limit=200)
    assert same and all(c.industry == industry for c in same)
    assert client.companies(industry="No Such Industry Anywhere").data == []
    one = large[0]
    assert one in client.companies.all(ticker=one.ticker.lower())
    both = client.companies.all(exchange="nse", market_cap="large_cap", search="bank")
    assert all(c.is_nse and c.market_cap_band == "large_cap" for c in both)
    assert {c.isin for c in both} <= {c.isin for c in banks}


def test_async_client_walks_the_same_set(server: Server, client: Client, api_key: str) -> None:
    async def main() -> tuple[list[Company], CompanyPage, list[Company]]:
        async with AsyncClient(api_key=api_key, base_url=server.base_url) as ac:
            every = await ac.companies.all(limit=200)
            page = await ac.companies(exchange="nse", limit=3)
            streamed = [c async for c in ac.companies.iter(search="bank", limit=5)]
            return every, page, streamed

    every, page, streamed = asyncio.run(main())
    assert every == client.companies.all(limit=200)
    assert len(page.data) == 3 and page.remaining is not None
    assert streamed == client.companies.all(search="bank")


def test_to_pandas_dtypes(client: Client) -> None:
    pd = pytest.importorskip("pandas")
    df = client.companies(limit=200).to_pandas()
    assert len(df) == 200
    assert list(df.columns) == [
        "isin", "ticker", "name", "industry", "sector",
        "is_bse", "is_nse", "market_cap_band", "logo_url",
    ]  # fmt: skip
    assert df["is_bse"].dtype == bool and df["is_nse"].dtype == bool
    assert isinstance(df["market_cap_band"].dtype, pd.CategoricalDtype)
    assert list(df["market_cap_band"].cat.categories) == ["large_cap", "mid_cap", "small_cap"]
    assert df["isin"].dtype == "string" and df["industry"].dtype == "string"
    assert df["logo_url"].isna().all()

    found = client.companies(search="reliance", limit=3).to_pandas()
    assert list(found.columns)[-2:] == ["match_field", "match_value"]
    assert found["match_field"].dtype == "string" and found["match_value"].notna().all()

    whole = client.companies.iter(limit=200, exchange="nse").to_pandas()
    assert len(whole) == len(client.companies.all(limit=200, exchange="nse"))
    assert whole["is_nse"].all() and whole["is_bse"].dtype == bool
    assert isinstance(whole["market_cap_band"].dtype, pd.CategoricalDtype)
    assert whole["market_cap_band"].isna().any()  # nulls stay missing, not a string "None"


def test_without_pandas_it_says_what_to_install(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    page = client.companies(limit=2)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install 'mds-client\[pandas\]'"):
        page.to_pandas()
    assert mds_client.__version__  # the package itself still imports and works
    assert len(client.companies(limit=2).data) == 2


def test_a_search_is_ranked_and_carries_its_match(client: Client) -> None:
    ranked = client.companies(search="reliance", limit=5)
    assert ranked.data and ranked.data[0].ticker == "RELIANCE"
    assert all(c.match is not None for c in ranked.data)
    top = ranked.data[0].match
    assert top is not None and top.field in ("ticker", "name") and "reliance" in top.value.lower()
    by_ticker = client.companies.all(search="reliance", sort="ticker")
    assert [c.ticker for c in by_ticker] == sorted(c.ticker for c in by_ticker)
    assert {c.isin for c in by_ticker} == {c.isin for c in client.companies.all(search="reliance")}
    assert all(c.match is None for c in client.companies(limit=5).data)


def test_an_unknown_industry_gives_a_hint(client: Client) -> None:
    industry = next(c.industry for c in client.companies.all(limit=200) if c.industry)
    unknown = industry.lower() if industry.lower() != industry else industry + "x"
    page = client.companies(industry=unknown)
    assert page.data == [] and page.hint is not None
    assert page.hint.param == "industry" and industry in page.hint.nearest
    assert client.companies(industry=industry).hint is None
