"""End-of-day prices against the real server: the demo loads the repository's
NSE daily files, which hold TTL's split (face value Rs 10 to Re 1, ex
2025-02-12) with its ISIN change; a series continues through it, adjusted as
asked, every factor shown, and reads as a DataFrame indexed by date."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest

from mds_client import (
    AsyncClient,
    Bar,
    Client,
    CompanyPrices,
    InvalidRequestError,
    MarketDayPage,
    NotFoundError,
)

from .conftest import Server

OLD, NEW = "INE592B01016", "INE592B01024"  # TTL before and after its split
FROM, TO = "2025-02-07", date(2025, 2, 14)  # a string and a date: both are taken


def test_a_series_continues_through_the_split_with_its_factor(client: Client) -> None:
    raw = client.company_prices(NEW, adjust="none", from_=FROM, to=TO)
    assert isinstance(raw, CompanyPrices) and raw.isin == NEW and raw.adjust == "none"
    assert all(isinstance(b, Bar) for b in raw)
    assert [b.date for b in raw] == sorted(b.date for b in raw)
    assert {b.isin for b in raw} == {OLD, NEW}
    before = next(b for b in raw if b.date == date(2025, 2, 11))
    after = next(b for b in raw if b.date == date(2025, 2, 12))
    assert (before.isin, before.close) == (OLD, 145.29)
    assert after.isin == NEW and after.close < before.close / 5, "the unadjusted close steps"
    assert raw.adjustments == []

    split = client.company_prices(NEW, from_=FROM, to=TO)
    assert split.adjust == "split"
    (action,) = [a for a in split.adjustments if a.ex_date == date(2025, 2, 12)]
    assert action.type == "split" and action.factor == pytest.approx(0.1)
    adjusted = next(b for b in split if b.date == date(2025, 2, 11))
    assert adjusted.close == pytest.approx(145.29 * action.factor, abs=1e-4)
    assert adjusted.volume == round(before.volume / action.factor)

    own = client.company_prices(NEW, lineage=False, from_=FROM, to=TO)
    assert {b.isin for b in own} == {NEW} and len(own) < len(split)


def test_bars_read_as_a_frame_indexed_by_date(client: Client) -> None:
    pd = pytest.importorskip("pandas")
    series = client.company_prices(NEW, adjust="none", from_=FROM, to=TO)
    df = series.to_pandas()
    assert isinstance(df.index, pd.DatetimeIndex) and df.index.name == "date"
    assert len(df) == len(series)
    assert df.loc["2025-02-11", "close"] == 145.29
    assert str(df["close"].dtype) == "Float64" and str(df["volume"].dtype) == "Int64"
    assert set(df["isin"]) == {OLD, NEW}


def test_bad_input_is_the_route_s_problem(client: Client) -> None:
    with pytest.raises(InvalidRequestError) as bad:
        client.company_prices(NEW, from_="2025-02-14", to="2025-02-07")
    assert bad.value.param in ("from", "to")
    with pytest.raises(NotFoundError):
        client.company_prices("INE000A01000")


def test_the_async_client_reads_the_same(server: Server, client: Client, api_key: str) -> None:
    async def main() -> CompanyPrices:
        async with AsyncClient(api_key=api_key, base_url=server.base_url) as a:
            found: CompanyPrices = await a.company_prices(NEW, from_=FROM, to=TO)
            return found

    assert asyncio.run(main()) == client.company_prices(NEW, from_=FROM, to=TO)


SPLIT_DAY = date(2025, 2, 12)


def test_the_market_on_a_day_pages_by_isin(client: Client) -> None:
    page = client.market_day(SPLIT_DAY, limit=50)
    assert isinstance(page, MarketDayPage) and page.date == SPLIT_DAY
    assert len(page) == 50 and page.has_more and page.next_cursor
    assert all(isinstance(b, Bar) and b.date == SPLIT_DAY for b in page)
    every = client.market_day.all("2025-02-12", limit=200)
    keys = [(b.isin, b.series) for b in every]
    assert keys == sorted(keys) and len(set(keys)) == len(keys), "ISIN then series, each once"
    assert every[:50] == page.data, "the first page is the walk's first"
    new = next(b for b in every if b.isin == NEW)
    assert (new.series, new.close) == ("BE", 14.01), "TTL's first day under its new ISIN"
    be = client.market_day.all(SPLIT_DAY, series="BE", limit=200)
    assert be and {b.series for b in be} == {"BE"} and len(be) < len(every)
    with pytest.raises(InvalidRequestError) as bad:
        client.market_day("2025-2-12")
    assert bad.value.param == "date"


def test_the_market_on_a_day_reads_as_a_frame(client: Client) -> None:
    pd = pytest.importorskip("pandas")
    bars = client.market_day.all(SPLIT_DAY, series="BE", limit=100)
    df = client.market_day.iter(SPLIT_DAY, series="BE", limit=100).to_pandas()
    assert isinstance(df.index, pd.DatetimeIndex) and df.index.name == "date"
    assert len(df) == len(bars) and set(df.index) == {pd.Timestamp(SPLIT_DAY)}
    assert list(df["isin"]) == [b.isin for b in bars]
    assert str(df["close"].dtype) == "Float64"
    assert len(client.market_day(SPLIT_DAY, series="BE", limit=5).to_pandas()) == 5


def test_the_async_client_walks_the_same_day(server: Server, client: Client, api_key: str) -> None:
    async def main() -> list[Bar]:
        async with AsyncClient(api_key=api_key, base_url=server.base_url) as a:
            first: MarketDayPage = await a.market_day(SPLIT_DAY, series="BE", limit=7)
            assert len(first) == 7
            return [b async for b in a.market_day.iter(SPLIT_DAY, series="BE", limit=7)]

    assert asyncio.run(main()) == client.market_day.all(SPLIT_DAY, series="BE", limit=7)
