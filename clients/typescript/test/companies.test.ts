/**
 * Companies and news against a real `mds demo`: walks, filters, detail, meta;
 * identity over time (the demo loads NSE 2024 and 2026 and the change files):
 * history, symbols, as_of, status.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { Client, type CompaniesQuery, type Company, InvalidRequestError, NotFoundError } from "../src/index.js";
import { plainWalk, serverWithClient } from "./helpers.js";

const { server, client } = await serverWithClient();
after(() => server.stop());

describe("companies", () => {
  test("a whole walk with iter() equals the list walked by plain fetch", async () => {
    const everything = await plainWalk<Company>(server, "/v1/companies");
    assert.ok(everything.length > 4000, `only ${everything.length} companies`);
    const walked: Company[] = [];
    for await (const c of client.companies.iter({ limit: 173 })) walked.push(c);
    assert.deepEqual(walked, everything);
    // all() is the same walk into an array, with the last page's meta.
    const all = await client.companies.all({ limit: 200 });
    assert.deepEqual(all, everything);
    assert.equal(all.meta.status, 200);
    // pages(): every page but the last is full and has a cursor.
    let pages = 0;
    for await (const page of client.companies.pages({ limit: 200 })) {
      pages++;
      assert.equal(page.has_more, page.next_cursor !== null);
      if (page.has_more) assert.equal(page.data.length, 200);
    }
    assert.equal(pages, Math.ceil(everything.length / 200));
  });

  test("filters: each one narrows the list as the server does", async () => {
    const cases: Array<[CompaniesQuery, (c: Company) => boolean]> = [
      [{ exchange: "nse" }, (c) => c.is_nse],
      [{ exchange: "bse", market_cap: "large_cap" }, (c) => c.is_bse && c.market_cap_band === "large_cap"],
      // (`search` is ranked by relevance with a `match` on each row, not a
      // filter of this walk: tests/suite/http_companies.rs covers it.)
      [{ letter: "t" }, (c) => c.ticker.startsWith("T")],
      [{ ticker: "reliance" }, (c) => c.ticker === "RELIANCE"],
    ];
    const everything = await plainWalk<Company>(server, "/v1/companies");
    for (const [filters, keep] of cases) {
      const got = await client.companies.all({ ...filters, limit: 200 });
      assert.deepEqual(
        got,
        await plainWalk<Company>(server, "/v1/companies", filters as Record<string, string>),
        JSON.stringify(filters),
      );
      assert.deepEqual(got, everything.filter(keep), JSON.stringify(filters));
      assert.ok(got.length > 0 && got.length < everything.length, JSON.stringify(filters));
    }
    const industry = everything.find((c) => c.industry !== null)?.industry as string;
    const inIt = await client.companies.all({ industry });
    assert.deepEqual(
      inIt,
      everything.filter((c) => c.industry === industry),
    );
    assert.deepEqual(await client.companies.all({ industry: "No Such Industry" }), []);
  });

  test("search: ranked with a match on each row; sort: ticker keeps ticker order", async () => {
    const ranked = await client.companies.list({ search: "reliance", limit: 3 });
    assert.equal(ranked.data[0]?.ticker, "RELIANCE");
    assert.ok(ranked.data.every((c) => c.match !== undefined && c.match.value.length > 0));
    const query: CompaniesQuery = { search: "reliance", sort: "ticker" };
    const byTicker = await client.companies.all(query);
    const tickers = byTicker.map((c) => c.ticker);
    assert.deepEqual(tickers, [...tickers].sort());
    const all = await client.companies.all({ search: "reliance" });
    assert.deepEqual(new Set(all.map((c) => c.isin)), new Set(byTicker.map((c) => c.isin)));
  });

  test("one page, then the next from its cursor; rate-limit headers on the result", async () => {
    const first = await client.companies.list({ exchange: "nse", limit: 3 });
    assert.equal(first.data.length, 3);
    assert.ok(first.has_more && first.next_cursor);
    const second = await client.companies.list({ exchange: "nse", limit: 3, cursor: first.next_cursor });
    assert.notDeepEqual(second.data, first.data);
    const both = await client.companies.list({ exchange: "nse", limit: 6 });
    assert.deepEqual([...first.data, ...second.data], both.data);
    // meta: every result says where the key stands.
    const m = first.meta;
    assert.equal(m.status, 200);
    assert.equal(m.limit, 600);
    assert.ok(m.remaining !== null && m.remaining < 600);
    assert.ok(m.reset !== null && m.reset >= 0);
    assert.match(m.rateLimitPolicy ?? "", /"minute";q=600;w=60, "month";q=1000000/);
    assert.match(m.rateLimit ?? "", /r=\d+;t=\d+/);
    assert.match(m.requestId ?? "", /^[0-9A-Z]{26}$/);
    assert.match(m.etag ?? "", /^"[0-9a-f]+(\.[a-z]+)?"$/); // ".gzip" when compressed
    // meta is not part of the body.
    assert.equal(JSON.stringify(first), JSON.stringify({ ...first }));
    assert.ok(!Object.keys(first).includes("meta"));
  });

  test("detail: every list field as in the list, listings and classification", async () => {
    const [row] = await client.companies.all({ ticker: "RELIANCE" });
    assert.ok(row);
    const detail = await client.companies.get(row.isin.toLowerCase());
    for (const k of Object.keys(row) as Array<keyof Company>) assert.deepEqual(detail[k], row[k], k);
    assert.deepEqual(
      detail.listings.map((l) => l.exchange),
      ["nse", "bse"],
    );
    assert.equal(detail.listings[1]?.scrip_code, "500325");
    assert.equal(detail.classification.macro_sector, "Energy");
    assert.ok(detail.market_cap && detail.market_cap.inr_crore > 0);
    assert.ok(!Number.isNaN(Date.parse(detail.updated_at)));
    assert.ok(detail.meta.remaining !== null);
  });
});

describe("news", () => {
  test("a whole walk equals the list; filters; one article with its body", async () => {
    const every = await plainWalk<{ slug: string }>(server, "/v1/news");
    assert.ok(every.length >= 50);
    const slugs: string[] = [];
    for await (const a of client.news.iter({ limit: 7 })) {
      assert.ok(!("body" in a));
      slugs.push(a.slug);
    }
    assert.deepEqual(
      slugs,
      every.map((a) => a.slug),
    );
    const since = "2026-01-15T00:00:00Z";
    const recent = await client.news.all({ published_after: since, limit: 5 });
    assert.deepEqual(recent, await plainWalk(server, "/v1/news", { published_after: since }));
    assert.ok(recent.length > 0 && recent.length < every.length);
    assert.ok(recent.every((a) => a.published_at !== null && Date.parse(a.published_at) > Date.parse(since)));
    const first = recent[0];
    assert.ok(first);
    const article = await client.news.article(first.slug);
    assert.equal(article.slug, first.slug);
    assert.equal(typeof article.body, "string");
    assert.equal(article.headline, first.headline);
    const tagged = await client.news.all({ tag: first.tags[0] ?? "none" });
    assert.ok(tagged.every((a) => a.tags.includes(first.tags[0] ?? "none")));
  });
});

describe("usage", () => {
  test("usage and daily usage add up", async () => {
    const key = await server.makeKey();
    const fresh = new Client({ apiKey: key, baseUrl: server.baseUrl });
    await fresh.companies.list({ limit: 1 });
    await fresh.news.list({ limit: 1 });
    const usage = await fresh.usage.get();
    assert.equal(usage.tier, "pro");
    assert.equal(usage.current_month.requests, 2);
    assert.equal(usage.meta.limit, 600);
    const daily = await fresh.usage.daily();
    assert.equal(daily.requests, 2);
    assert.equal(
      daily.days.reduce((n, d) => n + d.requests, 0),
      2,
    );
    const today = daily.days.at(-1);
    assert.equal(today?.by_route["/v1/companies"], 1);
    assert.equal(today?.by_route["/v1/news"], 1);
    const month = daily.period_start.slice(0, 7);
    assert.equal((await fresh.usage.daily({ month })).requests, 2);
  });
});

describe("identity over time", () => {
  test("a split: the old ISIN is superseded and its history names the new one", async () => {
    const old = await client.companies.get("INE296A01024");
    assert.equal(old.status, "superseded");
    assert.equal(old.superseded_by, "INE296A01032");
    const history = await client.companies.history("INE296A01024");
    assert.equal(history.isin, "INE296A01024");
    const split = history.events.find((e) => e.type === "isin_changed");
    assert.ok(split, JSON.stringify(history.events));
    assert.equal(split.type === "isin_changed" && split.to, "INE296A01032");
    assert.equal(history.meta.status, 200);
    const successor = await client.companies.get("INE296A01032");
    assert.deepEqual(successor.supersedes, ["INE296A01024"]);
  });

  test("a symbol that moved: TATAMOTORS was INE155A01022 until 2025-10-24", async () => {
    const symbol = await client.symbols.get("TATAMOTORS");
    assert.equal(symbol.exchange, "nse");
    const period = symbol.periods.find((p) => p.isin === "INE155A01022");
    assert.ok(period, JSON.stringify(symbol.periods));
    assert.equal(period.to, "2025-10-24");
    await assert.rejects(client.symbols.get("NO-SUCH-SYMBOL-X"), NotFoundError);
  });

  test("as_of and status on the list and the detail", async () => {
    const then = await client.companies.list({ ticker: "TATAMOTORS", as_of: "2024-06-01" });
    assert.deepEqual(
      then.data.map((c) => c.isin),
      ["INE155A01022"],
    );
    const now = await client.companies.list({ ticker: "TMPV" });
    assert.deepEqual(
      now.data.map((c) => c.isin),
      ["INE155A01022"],
    );
    const superseded = await client.companies.all({ status: "superseded", limit: 200 });
    assert.ok(superseded.length > 100, `${superseded.length} superseded`);
    assert.ok(superseded.every((c) => c.isin.length === 12));
    const detail = await client.companies.get("INE155A01022", { as_of: "2024-06-01" });
    assert.equal(detail.ticker, "TATAMOTORS");
    await assert.rejects(client.companies.get("INE155A01022", { as_of: "1989-12-31" }), InvalidRequestError);
  });
});
