"""End-of-day prices against the real server: the demo loads the repository's
NSE daily files, which hold TTL's split (face value Rs 10 to Re 1, ex
2025-02-12) with its ISIN change; a series continues through it, adjusted as
asked, every factor shown, and reads as a DataFrame indexed by date."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest

from mds_client import AsyncClient, Bar, Client, CompanyPrices, InvalidRequestError, NotFoundError

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
