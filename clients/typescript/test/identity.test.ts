/** Identity over time against a real `mds demo` (NSE 2024 and 2026, the change files): history, symbols, as_of, status. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client, InvalidRequestError, NotFoundError } from "../src/index.js";
import { type Server, startServer } from "./helpers.js";

let server: Server;
let client: Client;

before(async () => {
  server = await startServer();
  client = new Client({ apiKey: await server.makeKey(), baseUrl: server.baseUrl });
});
after(() => server?.stop());

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
