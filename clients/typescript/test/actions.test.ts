/**
 * Corporate actions (contract 13.3) against a real `mds demo`, the NSE
 * action files imported into its store with `mds import nse-actions`: a
 * company's actions with and without its lineage, the calendar's filters
 * and pages, the refusals typed.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { InvalidRequestError, NotFoundError } from "../src/index.js";
import { REPO, serverWithClient } from "./helpers.js";

const OLD = "INE296A01024"; // BAJFINANCE before its split of 2025-06-16
const NEW = "INE296A01032";
const { server, client } = await serverWithClient();
after(() => server.stop());

before(async () => {
  const dir = join(REPO, "data", "actions");
  const files = readdirSync(dir)
    .filter((f) => f.startsWith("nse_"))
    .map((f) => join(dir, f));
  await server.mds("import", "nse-actions", ...files);
  const deadline = Date.now() + 20_000;
  while ((await client.actions.ofCompany(NEW)).data.length === 0) {
    assert.ok(Date.now() < deadline, "the import never showed");
    await new Promise((r) => setTimeout(r, 100));
  }
});

test("a company's actions follow its lineage", async () => {
  const found = await client.actions.ofCompany(NEW);
  assert.equal(found.isin, NEW);
  assert.deepEqual(new Set(found.data.map((a) => a.isin)), new Set([OLD, NEW]));
  const days = found.data.map((a) => a.ex_date);
  assert.deepEqual(days, [...days].sort().reverse(), "ex_date descending");
  const split = found.data.find((a) => a.type === "split" && a.ex_date === "2025-06-16");
  assert.ok(split && split.type === "split");
  assert.deepEqual(
    [split.isin, split.factor, split.split.face_value_from, split.split.face_value_to],
    [OLD, 0.5, 2, 1],
  );
  const own = await client.actions.ofCompany(NEW, { lineage: false });
  assert.ok(own.data.every((a) => a.isin === NEW));
  const divs = await client.actions.ofCompany(NEW, { type: "dividend", from: "2020-01-01", to: "2025-06-16" });
  assert.ok(divs.data.length > 0 && divs.data.every((a) => a.type === "dividend" && a.ex_date >= "2020-01-01"));
  await assert.rejects(client.actions.ofCompany("INE000000000"), NotFoundError);
});

test("the calendar pages in ex_date order with its filters", async () => {
  const query = { ex_date_from: "2025-07-01", ex_date_to: "2025-07-31" } as const;
  const page = await client.actions.list({ ...query, limit: 20 });
  assert.equal(page.data.length, 20);
  assert.ok(page.has_more && page.next_cursor !== null);
  const month = await client.actions.all({ ...query, limit: 200 });
  assert.deepEqual(
    month.slice(0, 20).map((a) => a.id),
    page.data.map((a) => a.id),
  );
  const keys = month.map((a) => `${a.ex_date} ${a.id}`);
  assert.deepEqual(keys, [...keys].sort(), "ex_date ascending, then id");
  const splits = await client.actions.all({ type: "split", exchange: "nse", limit: 200 });
  assert.ok(splits.length > 100 && splits.every((a) => a.type === "split" && a.sources.includes("nse")));
  await assert.rejects(client.actions.list({ ex_date_from: "2025-02-01", ex_date_to: "2025-01-01" }), (e: unknown) => {
    assert.ok(e instanceof InvalidRequestError);
    assert.equal(e.param, "ex_date_to");
    return true;
  });
});

// End-of-day prices (contract 14.2), on the same demo: its NSE daily files
// hold TTL's split (face value Rs 10 to Re 1, ex 2025-02-12) with its ISIN
// change, and the actions it imports date it.
const TTL_OLD = "INE592B01016";
const TTL_NEW = "INE592B01024";
const SPAN = { from: "2025-02-07", to: "2025-02-14" };

test("a company's prices continue through its split, every factor shown", async () => {
  const raw = await client.prices.ofCompany(TTL_NEW, { ...SPAN, adjust: "none" });
  assert.equal(raw.isin, TTL_NEW);
  assert.equal(raw.adjust, "none");
  assert.deepEqual(raw.adjustments, []);
  assert.deepEqual(new Set(raw.bars.map((b) => b.isin)), new Set([TTL_OLD, TTL_NEW]));
  const before = raw.bars.find((b) => b.date === "2025-02-11");
  assert.ok(before && before.isin === TTL_OLD && before.close === 145.29, JSON.stringify(before));
  const split = await client.prices.ofCompany(TTL_NEW, SPAN);
  assert.equal(split.adjust, "split");
  const action = split.adjustments.find((a) => a.ex_date === "2025-02-12");
  assert.ok(action && action.type === "split" && Math.abs(action.factor - 0.1) < 1e-9, JSON.stringify(action));
  const adjusted = split.bars.find((b) => b.date === "2025-02-11");
  assert.ok(adjusted && Math.abs(adjusted.close - 145.29 * action.factor) < 1e-4, JSON.stringify(adjusted));
  const own = await client.prices.ofCompany(TTL_NEW, { ...SPAN, lineage: false });
  assert.ok(own.bars.every((b) => b.isin === TTL_NEW) && own.bars.length < split.bars.length);
  await assert.rejects(client.prices.ofCompany("INE000A01000"), NotFoundError);
  await assert.rejects(client.prices.ofCompany(TTL_NEW, { from: "2025-02-14", to: "2025-02-07" }), InvalidRequestError);
});

test("the market on a day pages by ISIN, whole or by series", async () => {
  const day = "2025-02-12";
  const page = await client.prices.marketDay(day, { limit: 50 });
  assert.equal(page.date, day);
  assert.equal(page.data.length, 50);
  assert.ok(page.has_more && page.next_cursor !== null);
  assert.ok(page.data.every((b) => b.date === day));
  const every = await client.prices.all({ date: day, limit: 200 });
  const keys = every.map((b) => `${b.isin} ${b.series}`);
  assert.deepEqual(keys, [...keys].sort(), "ISIN then series");
  assert.equal(new Set(keys).size, keys.length, "each bar once");
  assert.deepEqual(
    every.slice(0, 50).map((b) => b.isin),
    page.data.map((b) => b.isin),
  );
  const ttl = every.find((b) => b.isin === TTL_NEW);
  assert.ok(ttl && ttl.series === "BE" && ttl.close === 14.01, JSON.stringify(ttl));
  const next = await client.prices.marketDay(day, { limit: 50, cursor: page.next_cursor ?? undefined });
  assert.deepEqual(
    next.data.map((b) => b.isin),
    every.slice(50, 100).map((b) => b.isin),
  );
  const be: string[] = [];
  for await (const b of client.prices.iter({ date: day, series: "BE", limit: 100 })) be.push(b.series);
  assert.ok(be.length > 0 && be.length < every.length && be.every((s) => s === "BE"));
  await assert.rejects(client.prices.marketDay("2025-2-12"), (e: unknown) => {
    assert.ok(e instanceof InvalidRequestError);
    assert.equal(e.param, "date");
    return true;
  });
});
