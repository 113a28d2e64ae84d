"""The MCP tools of mds (API.md section 12) through a real MCP client, the
`mcp` SDK from PyPI, over both transports: streamable HTTP against a
running `mds demo` (POST /mcp) and stdio by spawning `mds mcp` as a
desktop agent would. Run by scripts/mcp-client.sh, which starts the
server and sets MDS_BASE_URL, MDS_API_KEY and MDS_BIN.

Each transport: initialize; list the nine tools, each with an input and
an output schema (the SDK validates every successful result's
structuredContent against the output schema); call every tool; a route's
404 is a result with isError and the problem; arguments breaking the
input schema (wrong type, missing, unknown) are results with isError
naming the argument, counted nothing, and limit 5.0 is 5; the text of a
50-company page is a table at most half the compact JSON; a tool call
counts exactly once, as its route (GET /v1/usage before and after). Over
HTTP also: no key is 401 before any MCP message is read, GET /mcp is 405,
a foreign Origin is 403 (the SDK cannot initialize with one). Over stdio
also: a wrong key is a tool error carrying the service's 401 problem.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlencode

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.types import CallToolResult

BASE = os.environ["MDS_BASE_URL"].rstrip("/")
KEY = os.environ["MDS_API_KEY"]
BIN = os.environ["MDS_BIN"]
AUTH = {"Authorization": f"Bearer {KEY}"}
TOOLS = [
    "search_companies",
    "get_company",
    "resolve_symbol",
    "list_news",
    "search_news",
    "get_article",
    "list_corporate_actions",
    "get_prices",
    "get_usage",
]
UNKNOWN_ISIN = "INE000000000"


def used() -> int:
    """The month's requests of the key, from GET /v1/usage (not counted)."""
    r = httpx.get(f"{BASE}/v1/usage", headers=AUTH)
    r.raise_for_status()
    return int(r.json()["current_month"]["requests"])


def route(path: str) -> Any:
    """The route's own answer (counted)."""
    r = httpx.get(f"{BASE}{path}", headers=AUTH)
    r.raise_for_status()
    return r.json()


def ok(result: CallToolResult) -> dict[str, Any]:
    """A successful result's structured content (the SDK has checked it
    against the tool's outputSchema), with a text no longer than its JSON."""
    assert not result.isError, result
    assert result.structuredContent is not None, result
    text = result.content[0]
    assert text.type == "text"
    assert 0 < len(text.text) <= len(compact(result.structuredContent)), text.text
    return result.structuredContent


def compact(value: Any) -> str:
    """The compact JSON of value."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def input_error(result: CallToolResult, param: str) -> None:
    """A tool result refusing the arguments, naming param."""
    assert result.isError, result
    problem = result.structuredContent
    assert problem and problem["param"] == param and param in problem["detail"], result


async def exercise(session: ClientSession, name: str) -> None:
    init = await session.initialize()
    assert init.protocolVersion == "2025-06-18", init
    assert init.capabilities.tools is not None
    assert init.serverInfo.name == "mds"

    tools = (await session.list_tools()).tools
    assert [t.name for t in tools] == TOOLS, [t.name for t in tools]
    for t in tools:
        assert t.description and t.inputSchema["type"] == "object", t
        assert t.outputSchema and t.outputSchema["type"] == "object", t
        for http in ("304", "%2B", "URL"):
            assert http not in t.description, (t.name, http)
        assert bool(t.inputSchema["properties"]) == (t.name != "get_usage"), t
    by_name = {t.name: t for t in tools}
    assert by_name["get_company"].inputSchema["required"] == ["isin"]
    assert "as_of" in by_name["search_companies"].inputSchema["properties"]

    page = ok(await session.call_tool("search_companies", {"search": "tata", "limit": 3}))
    assert page["data"] and "next_cursor" in page, page
    assert page == route("/v1/companies?search=tata&limit=3")

    company = ok(await session.call_tool("get_company", {"isin": "INE155A01022", "history": True}))
    assert company["isin"] == "INE155A01022" and company["history"]["events"], company
    symbol = ok(await session.call_tool("resolve_symbol", {"symbol": "TATAMOTORS", "exchange": "nse"}))
    assert symbol["periods"][0]["isin"] == "INE155A01022", symbol
    news = ok(await session.call_tool("list_news", {"limit": 2}))
    slug = news["data"][0]["slug"]
    article = ok(await session.call_tool("get_article", {"slug": slug}))
    assert article["slug"] == slug
    # search_news: the news list's q, the article found by a word of its headline.
    word = max(article["headline"].split(), key=len).strip(".,:;!?'\"()")
    found = ok(await session.call_tool("search_news", {"q": word, "limit": 5}))
    assert found == route("/v1/news?" + urlencode({"q": word, "limit": 5})), found
    dated = ok(await session.call_tool("search_news", {"q": word, "sort": "published_at", "limit": 50}))
    assert slug in [a["slug"] for a in dated["data"]], (word, dated)
    actions = ok(await session.call_tool("list_corporate_actions", {"isin": "INE155A01022", "lineage": False}))
    assert actions == route("/v1/companies/INE155A01022/actions?lineage=false"), actions
    calendar = ok(await session.call_tool("list_corporate_actions", {"ex_date_from": "2025-01-01", "limit": 3}))
    assert calendar == route("/v1/actions?ex_date_from=2025-01-01&limit=3"), calendar
    # The demo may hold no bars of this company: then the route's own 404.
    prices = await session.call_tool("get_prices", {"isin": "INE155A01022", "adjust": "none"})
    if prices.isError:
        assert prices.structuredContent["code"] == "not_found", prices
    else:
        assert prices.structuredContent == route("/v1/companies/INE155A01022/prices?adjust=none"), prices
    usage = ok(await session.call_tool("get_usage", {}))
    assert usage["key_prefix"] == KEY[: len(usage["key_prefix"])], usage

    missing = await session.call_tool("get_company", {"isin": UNKNOWN_ISIN})
    assert missing.isError, missing
    assert missing.structuredContent and missing.structuredContent["code"] == "not_found", missing

    # Input errors (SEP-1303): results naming the argument, counted nothing.
    before = used()
    input_error(await session.call_tool("get_company", {"isin": 12345}), "isin")
    input_error(await session.call_tool("get_company", {}), "isin")
    input_error(await session.call_tool("search_companies", {"limit": 5.5}), "limit")
    input_error(await session.call_tool("search_companies", {"serach": "tata"}), "serach")
    input_error(await session.call_tool("list_corporate_actions", {"lineage": "no"}), "lineage")
    input_error(await session.call_tool("search_news", {"limit": 3}), "q")
    assert used() == before, "input errors reach no route"
    five = ok(await session.call_tool("search_companies", {"limit": 5.0}))
    assert len(five["data"]) == 5, five

    # Compact text: a 50-company page as a table, at most half the JSON.
    fifty = await session.call_tool("search_companies", {"limit": 50})
    rows = ok(fifty)["data"]
    text = fifty.content[0].text
    assert len(rows) == 50 and len(text.splitlines()) == 52, text[:300]
    ratio = len(text) / len(compact(fifty.structuredContent))
    assert ratio <= 0.5, ratio

    # Counting: a tool call is one request of its route; get_usage, and
    # the protocol's own messages, none.
    before = used()
    ok(await session.call_tool("search_companies", {"limit": 1}))
    assert used() == before + 1
    ok(await session.call_tool("get_usage", {}))
    await session.list_tools()
    await session.send_ping()
    assert used() == before + 1
    ok(await session.call_tool("get_company", {"isin": "INE155A01022", "history": True}))
    assert used() == before + 3, "detail and history: two requests"
    ok(await session.call_tool("search_news", {"q": "shares"}))
    assert used() == before + 4, "a search is one request of the news list"
    print(
        f"ok: {name}: initialize, {len(tools)} tools with output schemas, every tool called, isError on 404, "
        f"input errors as results (not counted), 50-company text {ratio:.2f} of the JSON, counted once"
    )


@asynccontextmanager
async def over_http(key: str, origin: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {key}"}
    if origin:
        headers["Origin"] = origin
    async with (
        streamablehttp_client(f"{BASE}/mcp", headers=headers) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        yield session


@asynccontextmanager
async def over_stdio(key: str) -> AsyncIterator[ClientSession]:
    # What a desktop agent's configuration gives: the command, its
    # arguments and these two variables.
    params = StdioServerParameters(
        command=BIN, args=["mcp"], env={"MDS_API_KEY": key, "MDS_BASE_URL": BASE, "MDS_LOG": "warn"}
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        yield session


def http_without_key() -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    r = httpx.post(f"{BASE}/mcp", json=init)
    assert r.status_code == 401, r
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["code"] == "missing_api_key"
    r = httpx.post(f"{BASE}/mcp", content=b"{not json", headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401 and r.json()["code"] == "invalid_api_key", r.text
    r = httpx.get(f"{BASE}/mcp", headers=AUTH)
    assert r.status_code == 405 and r.headers["allow"] == "POST", r
    r = httpx.post(f"{BASE}/mcp", json=init, headers={**AUTH, "Origin": "http://evil.example"})
    assert r.status_code == 403 and r.json()["code"] == "forbidden_origin", r.text
    print("ok: http: no key is 401 before the message is read, GET is 405, a foreign Origin is 403")


async def sdk_refused(what: str, key: str, origin: str | None = None) -> None:
    """The SDK's own HTTP client, with `key` (and `origin`), cannot even initialize."""
    try:
        async with over_http(key, origin) as session:
            await asyncio.wait_for(session.initialize(), 10)
    except Exception as e:  # noqa: BLE001 - any failure will do; success would not
        print(f"ok: http: the SDK {what} fails ({type(e).__name__})")
        return
    raise AssertionError(f"initialize {what} succeeded")


async def sdk_foreign_origin() -> None:
    """The SDK sending a foreign Origin (as a browser page would) cannot initialize."""
    await sdk_refused("with a foreign Origin", KEY, "http://evil.example")


async def sdk_without_key() -> None:
    """The SDK's own HTTP client, without a key, cannot even initialize."""
    await sdk_refused("without a key", "")


async def stdio_wrong_key() -> None:
    wrong = "mds_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    async with over_stdio(wrong) as session:
        await session.initialize()
        r = await session.call_tool("get_usage", {})
        assert r.isError and r.structuredContent and r.structuredContent["status"] == 401, r
    print("ok: stdio: a wrong key is a tool error carrying the 401 problem")


async def main() -> None:
    http_without_key()
    await sdk_without_key()
    await sdk_foreign_origin()
    for name, connect in [("http", over_http), ("stdio", over_stdio)]:
        async with connect(KEY) as session:
            await asyncio.wait_for(exercise(session, name), 60)
    await stdio_wrong_key()


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
