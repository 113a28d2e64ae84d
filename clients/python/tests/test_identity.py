"""Identity over time against the real server: status and as_of on the list,
the detail's status fields and as_of, the history, the symbol lookup; and the
shapes of events and symbol periods as the contract writes them."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta

import pytest

from mds_client import (
    AsyncClient,
    Client,
    CompanyDetail,
    CompanyHistory,
    InvalidRequestError,
    NotFoundError,
    SymbolHistory,
)
from mds_client._pandas import details_frame

from .conftest import Server


def test_status_and_as_of_on_the_list(client: Client) -> None:
    # The demo holds NSE's 2024 and 2026 lists and its change files.
    then = client.companies(ticker="TATAMOTORS", as_of=date(2024, 6, 1))
    assert [c.isin for c in then.data] == ["INE155A01022"]
    assert [c.isin for c in client.companies(ticker="TMPV").data] == ["INE155A01022"]
    superseded = client.companies.all(status="superseded", limit=200)
    assert len(superseded) > 100 and "INE296A01024" in {c.isin for c in superseded}
    with pytest.raises(InvalidRequestError) as info:
        client.companies(as_of=date.today() + timedelta(days=3))
    assert info.value.param == "as_of"
    with pytest.raises(InvalidRequestError) as info:
        client.companies(status="gone")  # type: ignore[arg-type]
    assert info.value.param == "status"


def test_detail_history_and_symbol(client: Client) -> None:
    d = client.company("INE296A01024")
    assert (d.status, d.superseded_by) == ("superseded", "INE296A01032")
    assert client.company("INE296A01032").supersedes == ["INE296A01024"]
    assert client.company("INE155A01022", as_of="2024-06-01").ticker == "TATAMOTORS"
    h = client.history("INE296A01024")
    assert isinstance(h, CompanyHistory) and h.isin == "INE296A01024"
    split = [e for e in h.events if e.type == "isin_changed"]
    assert split and split[0].fields["to"] == "INE296A01032"
    holders = client.symbol("TATAMOTORS")
    assert isinstance(holders, SymbolHistory)
    assert any(p.isin == "INE155A01022" for p in holders.periods)
    with pytest.raises(NotFoundError):
        client.symbol("NEVERSEEN")


def test_async_client_asks_the_same(server: Server, client: Client, api_key: str) -> None:
    isin = client.companies(limit=1).data[0].isin

    async def main() -> tuple[CompanyDetail, CompanyHistory]:
        async with AsyncClient(api_key=api_key, base_url=server.base_url) as ac:
            return await ac.company(isin, as_of=date(2024, 1, 31)), await ac.history(isin)

    detail, history = asyncio.run(main())
    assert detail == client.company(isin) and history == client.history(isin)


def test_status_is_a_category_in_the_details_frame(client: Client) -> None:
    pd = pytest.importorskip("pandas")
    isins = [c.isin for c in client.companies(limit=3).data]
    df = details_frame([client.company(i) for i in isins])
    assert isinstance(df["status"].dtype, pd.CategoricalDtype)
    assert list(df["status"].cat.categories) == ["active", "superseded", "delisted"]
    assert (df["status"] == "active").all() and df["superseded_by"].isna().all()


def test_the_shapes_of_events_and_periods() -> None:
    h = CompanyHistory.from_json(
        {
            "isin": "INE296A01032",
            "events": [
                {"date": "2024-09-16", "exact": False, "type": "isin_changed",
                 "from": "INE296A01024", "to": "INE296A01032",
                 "face_value_from": 2.0, "face_value_to": 1.0},
                {"date": "2025-01-02", "exact": True, "type": "name_changed",
                 "from": "A", "to": "B"},
            ],
        }
    )  # fmt: skip
    assert [e.type for e in h.events] == ["isin_changed", "name_changed"]
    assert h.events[0].date == date(2024, 9, 16) and h.events[0].fields["from"] == "INE296A01024"
    s = SymbolHistory.from_json(
        {
            "symbol": "TATAMOTORS",
            "exchange": "nse",
            "periods": [
                {"isin": "INE155A01022", "name": "Tata Motors", "from": "1998-07-13", "to": None},
                {"isin": "INE000000000", "name": "Old", "from": "1990-01-01", "to": "1998-07-13"},
            ],
        }
    )
    assert s.periods[0].to is None and s.periods[1].to == date(1998, 7, 13)
    assert s.periods[0].from_ == date(1998, 7, 13)
    detail = CompanyDetail.from_json(
        {"isin": "INE296A01024", "ticker": "BAJFINANCE", "name": "Bajaj Finance", "is_bse": True,
         "is_nse": True, "listings": [], "classification": {}, "market_cap": None,
         "status": "superseded", "superseded_by": "INE296A01032", "supersedes": [],
         "updated_at": "2026-11-01T10:00:00+00:00"}
    )  # fmt: skip
    assert (detail.status, detail.superseded_by) == ("superseded", "INE296A01032")
