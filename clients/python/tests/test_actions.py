"""Corporate actions against the real server: a company's actions with its
lineage, the calendar's filters and pages, the typed models and the
DataFrame. The NSE action files are imported into the demo's store with
`mds import nse-actions` (the demo holds the identity data they resolve by)
unless the demo already holds them."""

from __future__ import annotations

import asyncio
import time
from datetime import date

import httpx
import pytest

from mds_client import (
    ActionPage,
    AsyncClient,
    Client,
    CompanyActions,
    CorporateAction,
    InvalidRequestError,
    NotFoundError,
)

from .conftest import REPO, Server

OLD, NEW = "INE296A01024", "INE296A01032"  # BAJFINANCE before and after its 2025 split


@pytest.fixture(scope="module")
def actions_loaded(server: Server) -> None:
    """The NSE files imported, once the server serves them."""
    files = sorted(str(p) for p in (REPO / "data" / "actions").glob("nse_*.csv.zst"))
    server.mds("import", "nse-actions", *files)
    deadline = time.monotonic() + 20
    with httpx.Client(
        base_url=server.base_url, headers={"Authorization": f"Bearer {server.demo_key}"}
    ) as h:
        while not h.get(f"/v1/companies/{NEW}/actions").json()["data"]:
            assert time.monotonic() < deadline, "the import never showed"
            time.sleep(0.1)


@pytest.mark.usefixtures("actions_loaded")
def test_a_company_s_actions_with_its_lineage(client: Client) -> None:
    found = client.company_actions(NEW)
    assert isinstance(found, CompanyActions) and found.isin == NEW
    assert {a.isin for a in found} == {OLD, NEW}
    days = [a.ex_date for a in found]
    assert days == sorted(days, reverse=True), "ex_date descending"
    split = next(a for a in found if a.type == "split" and a.ex_date == date(2025, 6, 16))
    assert isinstance(split, CorporateAction)
    assert (split.isin, split.factor) == (OLD, 0.5)
    assert split.figures["face_value_from"] == 2 and split.figures["face_value_to"] == 1
    own = client.company_actions(NEW, lineage=False)
    assert {a.isin for a in own} <= {NEW}
    divs = client.company_actions(NEW, type="dividend", from_=date(2020, 1, 1), to="2025-06-16")
    assert divs.data and all(a.type == "dividend" for a in divs)
    assert all(date(2020, 1, 1) <= a.ex_date <= date(2025, 6, 16) for a in divs)
    assert all(a.figures["amount"] > 0 for a in divs)
    with pytest.raises(InvalidRequestError) as info:
        client.company_actions(NEW, from_="2025-02-01", to="2025-01-01")
    assert info.value.param == "to"
    with pytest.raises(NotFoundError):
        client.company_actions("INE000000000")


@pytest.mark.usefixtures("actions_loaded")
def test_the_calendar_pages_and_frames(client: Client) -> None:
    page = client.actions(ex_date_from=date(2025, 7, 1), ex_date_to="2025-07-31", limit=20)
    assert isinstance(page, ActionPage) and len(page) == 20 and page.has_more
    week = client.actions.all(ex_date_from="2025-07-01", ex_date_to="2025-07-31", limit=200)
    assert [a.id for a in week[:20]] == [a.id for a in page]
    keys = [(a.ex_date, a.id) for a in week]
    assert keys == sorted(keys), "ex_date ascending, then id"
    assert all(date(2025, 7, 1) <= a.ex_date <= date(2025, 7, 31) for a in week)
    splits = client.actions.iter(type="split", exchange="nse").to_pandas()
    assert len(splits) > 100 and set(splits["type"].unique()) == {"split"}
    assert str(splits["ex_date"].dtype).startswith("datetime64")
    assert str(splits["factor"].dtype) == "Float64"
    assert splits["face_value_from"].notna().all()
    frame = client.company_actions(NEW).to_pandas()
    assert len(frame) == len(client.company_actions(NEW))
    assert str(frame["ratio_new"].dtype) == "Int64"
    with pytest.raises(InvalidRequestError) as info:
        client.actions(type="dividends")  # type: ignore[arg-type]
    assert info.value.param == "type"


@pytest.mark.usefixtures("actions_loaded")
def test_async_client_asks_the_same(server: Server, client: Client, api_key: str) -> None:
    async def main() -> tuple[CompanyActions, list[CorporateAction]]:
        async with AsyncClient(api_key=api_key, base_url=server.base_url) as a:
            found = await a.company_actions(NEW, lineage=False)
            calendar = await a.actions.all(ex_date_from="2026-07-01", limit=50)
            return found, calendar

    found, calendar = asyncio.run(main())
    assert found == client.company_actions(NEW, lineage=False)
    assert [a.id for a in calendar] == [a.id for a in client.actions.all(ex_date_from="2026-07-01")]
