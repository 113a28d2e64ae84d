"""Company detail, the change feed and the sync helper (API.md sections 7.1 and
7.2): against the real server, across a real ``mds import companies`` into the
store it serves; and the contract's shapes, including ``410``, against a tiny
fake."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import date, datetime, timezone
from typing import Any

import httpx
import pytest

from mds_client import (
    AsyncClient,
    ChangesPage,
    Client,
    CompanyDetail,
    InvalidRequestError,
    Listing,
    NotFoundError,
    SyncTokenExpiredError,
    listings_frame,
)

from .conftest import Server

RELIANCE = "INE002A01018"
ADDED = "US0378331005"  # not an Indian company: the demo data does not hold it
FIELDS = ["isin", "ticker", "name", "industry", "sector", "is_bse", "is_nse",
          "market_cap_band", "logo_url"]  # fmt: skip


def wait_for_name(client: Client, isin: str, name: str) -> None:
    """Until the server serves ``isin`` with ``name``: the import reached its catalog."""
    deadline = time.monotonic() + 10
    while True:
        try:
            if client.company(isin).name == name:
                return
        except NotFoundError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"the import never reached the served catalog ({isin})")
        time.sleep(0.05)


# --- against the real server ------------------------------------------------


def test_company_detail(client: Client) -> None:
    listed = client.companies.all(ticker="RELIANCE")
    assert listed
    row = listed[0]
    detail = client.company(row.isin.lower())
    assert isinstance(detail, CompanyDetail)
    for f in FIELDS:
        assert getattr(detail, f) == getattr(row, f), f
    assert detail.updated_at.tzinfo is not None and detail.updated_at <= datetime.now(timezone.utc)
    want = [e for e, listed_there in (("nse", row.is_nse), ("bse", row.is_bse)) if listed_there]
    assert [lst.exchange for lst in detail.listings] == want == ["nse", "bse"]
    # What the demo's exchange files say about Reliance Industries, typed.
    nse, bse = detail.listings
    assert (nse.symbol, nse.scrip_code, nse.series, nse.status) == (
        "RELIANCE",
        None,
        "EQ",
        "active",
    )
    assert nse.listed_on is not None and nse.face_value == 10.0
    assert (bse.scrip_code, bse.series, bse.face_value) == ("500325", "A", 10.0)
    assert detail.classification.macro_sector == "Energy"
    assert detail.market_cap is not None and detail.market_cap.inr_crore > 0
    assert detail.market_cap.as_of == date(2024, 3, 28)
    assert detail.remaining is not None and detail.meta.etag is not None
    for isin in ["US88160R1014", "INE117A01023", "nope"]:  # unknown, bad check digit, malformed
        with pytest.raises(NotFoundError):
            client.company(isin)


def test_changes_pages_end_with_a_sync_token(client: Client) -> None:
    pages = list(client.changes_pages(limit=200))
    assert all(p.sync_token is None and p.has_more for p in pages[:-1])
    assert pages[-1].sync_token is not None and not pages[-1].has_more
    isins = [d.isin for p in pages for d in p.data]
    # The feed carries every company, superseded and delisted ones too.
    assert len(isins) == len(set(isins)) == len(client.companies.all(limit=200, status="any"))
    first = client.changes(limit=3)
    assert first.has_more and first.next_cursor is not None and len(first.data) == 3
    assert client.changes(pages[-1].sync_token).data == []
    with pytest.raises(InvalidRequestError) as info:
        client.changes("garbage")
    assert (info.value.code, info.value.param) == ("invalid_cursor", "since")
    with pytest.raises(InvalidRequestError) as info:
        client.changes(limit=0)
    assert (info.value.code, info.value.param) == ("invalid_parameter", "limit")


def test_sync_helper_across_a_real_import(server: Server, client: Client, api_key: str) -> None:
    store: dict[str, CompanyDetail] = {}
    first = client.sync(store)
    listed = client.companies.all(limit=200, status="any")
    assert first.from_scratch and len(first.changed) == len(store) == len(listed)
    assert set(store) == {c.isin for c in listed}
    assert store[listed[123].isin] == client.company(listed[123].isin)
    again = client.sync(store, first.sync_token)
    assert again.changed == [] and not again.from_scratch
    before = dict(store)

    # One import with the CLI into the store the server serves: a company
    # renamed, one added, one left exactly as it was. The rows are records
    # as the API sends them (JSON Lines of V1CompanyDetail import back).
    target, same = store[sorted(store)[0]], store[sorted(store)[1]]
    auth = {"Authorization": f"Bearer {api_key}"}
    with httpx.Client(base_url=server.base_url, headers=auth) as h:
        raw = {
            i: h.get(f"/v1/companies/{i}").raise_for_status().json()
            for i in [target.isin, same.isin]
        }
    renamed = {**raw[target.isin], "name": target.name + " (renamed by pytest)"}
    added: dict[str, Any] = {
        "isin": ADDED, "ticker": "ZZPYSYNC", "name": "Pytest Sync Ltd", "industry": None,
        "sector": None, "is_bse": True, "is_nse": False, "market_cap_band": None, "logo_url": None,
    }  # fmt: skip
    path = server.workdir / "sync-import.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (renamed, raw[same.isin], added)))
    out = server.mds("import", "companies", str(path))
    assert "(1 new, 1 updated, 1 unchanged)" in out, out
    wait_for_name(client, ADDED, added["name"])

    delta = client.sync(store, again.sync_token)
    assert not delta.from_scratch
    assert sorted(d.isin for d in delta.changed) == sorted([target.isin, ADDED])
    assert len(store) == len(before) + 1
    assert store[target.isin].name == renamed["name"]
    assert store[target.isin].updated_at > before[target.isin].updated_at
    assert store[ADDED].ticker == "ZZPYSYNC" and store[ADDED].listings == [
        Listing("bse", "ZZPYSYNC", None, None, None, None, "active")
    ]
    for isin in (target.isin, ADDED):
        assert store[isin] == client.company(isin), isin
    assert all(store[i] == d for i, d in before.items() if i != target.isin), "the rest as it was"
    assert client.sync(store, delta.sync_token).changed == []

    pytest.importorskip("pandas")
    df, token = client.sync_frame(None)
    assert len(df) == len(store) and df.loc[target.isin, "name"] == renamed["name"]
    df2, _ = client.sync_frame(df, token)
    assert df2.equals(df)


def test_async_company_changes_and_sync(server: Server, api_key: str) -> None:
    async def main() -> tuple[Any, ...]:
        async with AsyncClient(api_key=api_key, base_url=server.base_url) as ac:
            row = (await ac.companies(limit=1)).data[0]
            detail = await ac.company(row.isin)
            store: dict[str, CompanyDetail] = {}
            first = await ac.sync(store)
            again = await ac.sync(store, first.sync_token)
            total = len(await ac.companies.all(limit=200, status="any"))
            try:
                await ac.company("US88160R1014")
            except NotFoundError:
                missing = True
            else:
                missing = False
            return row, detail, store, first, again, total, missing

    row, detail, store, first, again, total, missing = asyncio.run(main())
    assert detail.isin == row.isin and detail.name == row.name and missing
    assert first.from_scratch and len(store) == total and again.changed == []
    assert store[row.isin] == detail


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
             "listings": [],
             "classification": {"macro_sector": None, "sector": None, "industry": None,
                                "basic_industry": None}}  # fmt: skip
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
    assert d.listings[1].scrip_code == "500325"
    assert d.listings[0].listed_on is not None and d.listings[0].listed_on.year == 1995
    assert d.listings[1].face_value == 10.0 and d.classification.basic_industry is None
    assert d.market_cap is not None and d.market_cap.inr_crore == 1900000.5
    assert d.updated_at == datetime(2026, 11, 1, 10, tzinfo=timezone.utc)

    store: dict[str, CompanyDetail] = {}
    first = c.sync(store)
    assert first.sync_token == "t1" and set(store) == {RELIANCE, "INE467B01029"}
    delta = c.sync(store, first.sync_token)
    assert delta.sync_token == "t2" and store[RELIANCE].name == "Reliance (renamed)"
    assert not delta.from_scratch and [x.isin for x in delta.changed] == [RELIANCE]
    assert c.sync(store, "t2").changed == []
    # an expired token clears the store and starts over, from scratch
    store["US88160R1014"] = store[RELIANCE]
    expired = c.sync(store, "old")
    assert expired.from_scratch and expired.sync_token == "t1"
    assert set(store) == {RELIANCE, "INE467B01029"}
    with pytest.raises(SyncTokenExpiredError) as info:
        c.sync(store, "old", restart_if_expired=False)
    assert info.value.status == 410 and info.value.param == "since"

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


def test_a_detail_without_updated_at_is_refused() -> None:
    """``updated_at`` is always present (7.1): a record without it is not one."""
    with pytest.raises((KeyError, ValueError)):
        CompanyDetail.from_json({k: v for k, v in DETAIL.items() if k != "updated_at"})
    with pytest.raises(ValueError):
        CompanyDetail.from_json({**DETAIL, "updated_at": None})
