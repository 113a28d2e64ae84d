/**
 * The change feed and the sync helper against real servers: a real
 * `mds import companies` between two syncs while the server runs, then a
 * real `410 sync_token_expired` from a server on a copy of the store taken
 * before the token's generation (a store restored from an older backup).
 */
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Client, type CompanyDetail, InvalidRequestError } from "../src/index.js";
import { type Server, startServer } from "./helpers.js";

const ADDED = "US0378331005"; // not an Indian company: the demo data does not hold it
const LATER = "US5949181045"; // added by the second import, offline

let server: Server;
let key: string;
let client: Client;
const cleanup: Array<() => Promise<void> | void> = [];

before(async () => {
  server = await startServer();
  key = await server.makeKey();
  client = new Client({ apiKey: key, baseUrl: server.baseUrl });
});
after(async () => {
  for (const f of cleanup.reverse()) await f();
  await server?.stop();
});

/** Until `c` serves `isin` named `name`: the import reached its catalog. */
async function waitForName(c: Client, isin: string, name: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const got = await c.companies.get(isin).catch(() => null);
    if (got?.name === name) return;
    if (Date.now() > deadline) assert.fail(`the import never reached the served catalog (${isin})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function addedRow(isin: string, ticker: string, name: string): Record<string, unknown> {
  return {
    isin,
    ticker,
    name,
    industry: null,
    sector: null,
    is_bse: true,
    is_nse: false,
    market_cap_band: null,
    logo_url: null,
  };
}

test("the change feed: pages end with a sync token", async () => {
  const pages = [];
  for await (const p of client.companies.changesPages({ limit: 200 })) pages.push(p);
  const last = pages.at(-1);
  assert.ok(last && !last.has_more && typeof last.sync_token === "string");
  assert.ok(pages.slice(0, -1).every((p) => p.has_more && p.sync_token === null && p.next_cursor !== null));
  const isins = pages.flatMap((p) => p.data.map((d) => d.isin));
  assert.equal(new Set(isins).size, isins.length);
  // The feed carries every company, superseded and delisted ones too.
  assert.equal(isins.length, (await client.companies.all({ limit: 200, status: "any" })).length);
  assert.deepEqual((await client.companies.changes({ since: last.sync_token ?? "" })).data, []);
  const first = await client.companies.changes({ limit: 3 });
  assert.ok(first.has_more && first.next_cursor !== null && first.data.length === 3 && first.sync_token === null);
  await assert.rejects(client.companies.changes({ since: "garbage" }), InvalidRequestError);
});

test("sync: from scratch, nothing, a real import, then a 410 from a restored store", async () => {
  const store = new Map<string, CompanyDetail>();
  const first = await client.companies.sync(store);
  const listed = await client.companies.all({ limit: 200, status: "any" });
  assert.ok(first.fromScratch && !first.tokenExpired);
  assert.equal(first.changed.length, listed.length);
  assert.deepEqual([...store.keys()].sort(), listed.map((c) => c.isin).sort());
  const some = listed[123];
  assert.ok(some);
  assert.deepEqual(store.get(some.isin), { ...(await client.companies.get(some.isin)) });

  const again = await client.companies.sync(store, first.syncToken);
  assert.deepEqual(again.changed, []);
  assert.ok(!again.fromScratch);

  // One import into the store the server serves: one renamed, one added, one as it was.
  const [targetIsin, sameIsin] = [...store.keys()].sort();
  assert.ok(targetIsin && sameIsin);
  const target = store.get(targetIsin) as CompanyDetail;
  const renamed = { ...target, name: `${target.name} (renamed by node:test)` };
  const rows = [renamed, store.get(sameIsin), addedRow(ADDED, "ZZTSSYNC", "TypeScript Sync Ltd")];
  const file = join(server.workdir, "sync-import.jsonl");
  writeFileSync(file, rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
  assert.match(await server.mds("import", "companies", file), /\(1 new, 1 updated, 1 unchanged\)/);
  await waitForName(client, ADDED, "TypeScript Sync Ltd");

  const before = new Map(store);
  const delta = await client.companies.sync(store, again.syncToken);
  assert.ok(!delta.fromScratch && !delta.tokenExpired);
  assert.deepEqual(delta.changed.map((c) => c.isin).sort(), [targetIsin, ADDED].sort());
  assert.equal(store.size, before.size + 1);
  assert.equal(store.get(targetIsin)?.name, renamed.name);
  assert.ok(Date.parse(store.get(targetIsin)?.updated_at ?? "") > Date.parse(target.updated_at));
  assert.deepEqual(store.get(ADDED)?.listings, [
    {
      exchange: "bse",
      symbol: "ZZTSSYNC",
      scrip_code: null,
      series: null,
      listed_on: null,
      face_value: null,
      status: "active",
      last_seen: null,
    },
  ]);
  for (const isin of [targetIsin, ADDED]) {
    assert.deepEqual(store.get(isin), { ...(await client.companies.get(isin)) }, isin);
  }
  for (const [isin, c] of before) if (isin !== targetIsin) assert.deepEqual(store.get(isin), c, isin);
  assert.deepEqual((await client.companies.sync(store, delta.syncToken)).changed, []);

  // A backup of the store as it is now; then a second import, offline.
  await server.stop({ keepFiles: true });
  const backup = mkdtempSync(join(tmpdir(), "mds-ts-backup-"));
  cleanup.push(() => rmSync(backup, { recursive: true, force: true }));
  for (const suffix of ["", "-wal", "-shm"]) {
    const from = join(server.workdir, `mds.db${suffix}`);
    if (existsSync(from)) copyFileSync(from, join(backup, `mds.db${suffix}`));
  }
  const file2 = join(server.workdir, "later.jsonl");
  writeFileSync(file2, `${JSON.stringify(addedRow(LATER, "ZZTSLATE", "TypeScript Later Ltd"))}\n`);
  assert.match(await server.mds("import", "companies", file2), /\(1 new, 0 updated, 0 unchanged\)/);

  // The store that took it: only that company is new.
  const live = await startServer(join(server.workdir, "mds.db"));
  cleanup.push(() => live.stop());
  const onLive = new Client({ apiKey: key, baseUrl: live.baseUrl });
  const later = await onLive.companies.sync(store, delta.syncToken);
  assert.deepEqual(
    later.changed.map((c) => c.isin),
    [LATER],
  );
  assert.equal(store.size, before.size + 2);

  // The backup has not reached that token's generation: 410, so the helper
  // clears the copy and syncs from scratch (the company only the live store has is gone).
  const restored = await startServer(join(backup, "mds.db"));
  cleanup.push(() => restored.stop());
  const onRestored = new Client({ apiKey: key, baseUrl: restored.baseUrl });
  const fresh = await onRestored.companies.sync(store, later.syncToken);
  assert.ok(fresh.tokenExpired && fresh.fromScratch);
  assert.equal(store.size, before.size + 1);
  assert.ok(!store.has(LATER) && store.has(ADDED));
  assert.equal(fresh.changed.length, store.size);
  assert.deepEqual((await onRestored.companies.sync(store, fresh.syncToken)).changed, []);
});
