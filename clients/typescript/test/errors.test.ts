/**
 * A typed error per family (400, 401, 404, 429) from a real `mds demo`,
 * retries after a real 429, and the key kept out of every error, log line,
 * `toString` and `util.inspect`.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { inspect } from "node:util";
import {
  ApiError,
  AuthenticationError,
  Client,
  type CompaniesQuery,
  ConfigurationError,
  InvalidRequestError,
  MdsError,
  NotFoundError,
  RateLimitError,
  TransportError,
} from "../src/index.js";
import { type Server, startServer } from "./helpers.js";

let server: Server;
let key: string;
let client: Client;

before(async () => {
  server = await startServer();
  key = await server.makeKey();
  client = new Client({ apiKey: key, baseUrl: server.baseUrl, retry: { maxRetries: 0 } });
});
after(() => server?.stop());

/** The rejection of `p`, which must be an instance of `cls`. */
async function rejection<E extends Error>(p: Promise<unknown>, cls: new (...a: never[]) => E): Promise<E> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof cls, `expected ${cls.name}, got ${String(e)}`);
    return e;
  }
  assert.fail(`expected ${cls.name}, got a result`);
}

/** Everything an error shows: message, stack, inspect (with its cause) and JSON. */
function everything(e: unknown): string {
  return [String(e), (e as Error).stack, inspect(e, { showHidden: true, depth: 10 }), JSON.stringify(e)].join("\n");
}

describe("one error class per family, with the problem body", () => {
  test("400: invalid_parameter, unknown_parameter, invalid_cursor", async () => {
    let e = await rejection(client.companies.list({ limit: 0 }), InvalidRequestError);
    assert.deepEqual([e.status, e.code, e.param], [400, "invalid_parameter", "limit"]);
    assert.ok(e instanceof ApiError && e instanceof MdsError && e instanceof Error);
    assert.match(e.detail, /limit/);
    assert.match(e.requestId ?? "", /^[0-9A-Z]{26}$/);
    assert.equal(e.requestId, e.meta.requestId);
    assert.equal(e.problem.type, "/problems/invalid_parameter");
    assert.equal(e.message, `invalid_parameter (HTTP 400): ${e.detail}`);
    assert.equal(e.meta.limit, 600, "rate-limit headers on errors too");

    e = await rejection(client.companies.list({ industy: "Banks" } as CompaniesQuery), InvalidRequestError);
    assert.deepEqual([e.code, e.param], ["unknown_parameter", "industy"]);
    e = await rejection(client.companies.list({ cursor: "garbage" }), InvalidRequestError);
    assert.deepEqual([e.code, e.param], ["invalid_cursor", "cursor"]);
    e = await rejection(client.companies.changes({ since: "garbage" }), InvalidRequestError);
    assert.deepEqual([e.code, e.param], ["invalid_cursor", "since"]);
    e = await rejection(client.news.list({ isin: "INE002A01019" }), InvalidRequestError);
    assert.deepEqual([e.code, e.param], ["invalid_parameter", "isin"]);
  });

  test("401: invalid_api_key, and the key is in none of it", async () => {
    const wrong = `mds_live_${"x".repeat(38)}`;
    const bad = new Client({ apiKey: wrong, baseUrl: server.baseUrl });
    const e = await rejection(bad.usage.get(), AuthenticationError);
    assert.deepEqual([e.status, e.code], [401, "invalid_api_key"]);
    assert.ok(!everything(e).includes(wrong));
  });

  test("404: unknown company (and a malformed ISIN), unknown article", async () => {
    for (const isin of ["US88160R1014", "INE117A01023", "nope"]) {
      const e = await rejection(client.companies.get(isin), NotFoundError);
      assert.deepEqual([e.status, e.code], [404, "not_found"]);
    }
    const e = await rejection(client.news.article("no-such-article"), NotFoundError);
    assert.equal(e.code, "not_found");
  });

  test("429: a real rate_limited, then a retry that honours Retry-After", async () => {
    const tiny = await server.makeKey({ ratePerMinute: 60, quota: 100_000 });
    const impatient = new Client({ apiKey: tiny, baseUrl: server.baseUrl, retry: { maxRetries: 0 } });
    let limited: RateLimitError | undefined;
    for (let i = 0; i < 70 && !limited; i++) {
      try {
        await impatient.usage.get();
      } catch (e) {
        assert.ok(e instanceof RateLimitError, String(e));
        limited = e;
      }
    }
    assert.ok(limited, "60 a minute and never a 429");
    assert.deepEqual([limited.status, limited.code], [429, "rate_limited"]);
    assert.deepEqual(limited.violatedPolicies, ["minute"]);
    assert.ok(limited.retryAfter !== null && limited.retryAfter > 0 && limited.retryAfter <= 60);
    assert.equal(limited.meta.remaining, 0);

    const lines: string[] = [];
    const patient = new Client({
      apiKey: tiny,
      baseUrl: server.baseUrl,
      retry: { maxRetries: 3, maxDelay: 10, jitter: 0.05 },
      logger: (line) => lines.push(line),
    });
    // Spend what came back meanwhile, so the next call meets a 429 again.
    for (let i = 0; i < 5; i++) await impatient.usage.get().catch(() => undefined);
    const t0 = performance.now();
    const usage = await patient.usage.get();
    const waited = (performance.now() - t0) / 1000;
    assert.equal(usage.tier.startsWith("ts-"), true);
    assert.equal(usage.rate_limit_per_minute, 60);
    assert.ok(lines.length >= 1, "no retry was logged");
    assert.match(lines[0] ?? "", /got 429 rate_limited .*retry 1\/3 in \d/);
    assert.ok(waited >= (limited.retryAfter ?? 0) * 0.9, `waited ${waited} s`);
    assert.ok(!lines.join("\n").includes(tiny));
  });

  test("429 quota_exceeded: Retry-After past maxDelay is not waited for", async () => {
    const spent = await server.makeKey({ ratePerMinute: 600, quota: 1 });
    const c = new Client({ apiKey: spent, baseUrl: server.baseUrl, retry: { maxRetries: 3, maxDelay: 60 } });
    await c.companies.list({ limit: 1 });
    const t0 = performance.now();
    const e = await rejection(c.companies.list({ limit: 1 }), RateLimitError);
    assert.ok(performance.now() - t0 < 2000);
    assert.equal(e.code, "quota_exceeded");
    assert.deepEqual(e.violatedPolicies, ["month"]);
    assert.ok((e.retryAfter ?? 0) > 60);
    // usage stays readable when the quota is spent: it is free.
    assert.equal((await c.usage.get()).current_month.remaining, 0);
  });
});

describe("the key stays secret", () => {
  test("not in toString, JSON, util.inspect of the client or its parts", () => {
    const c = new Client({ apiKey: key, baseUrl: server.baseUrl });
    const shown = [
      String(c),
      `${c}`,
      JSON.stringify(c),
      inspect(c, { showHidden: true, depth: Infinity }),
      inspect(c.companies, { showHidden: true, depth: Infinity }),
      inspect(c.news, { showHidden: true, depth: Infinity }),
      inspect(c.usage, { showHidden: true, depth: Infinity }),
      JSON.stringify(c.companies),
      Object.values(c).map(String).join(),
    ].join("\n");
    assert.ok(!shown.includes(key), shown);
    assert.ok(!shown.includes(key.slice(9)), "not even the key's body");
    assert.match(String(c), /apiKey=\*\*\*/);
  });

  test("not in a transport error (connection refused) nor in its cause", async () => {
    const c = new Client({ apiKey: key, baseUrl: "http://127.0.0.1:9", retry: { maxRetries: 1, backoff: 0.01 } });
    const e = await rejection(c.usage.get(), TransportError);
    assert.match(e.message, /GET \/v1\/usage: no answer/);
    assert.ok(!everything(e).includes(key));
  });

  test("a key a header cannot carry is refused without quoting it", () => {
    const odd = `${key}\n`;
    assert.throws(
      () => new Client({ apiKey: odd, baseUrl: server.baseUrl }),
      (e: unknown) => e instanceof ConfigurationError && !everything(e).includes(key),
    );
  });
});

describe("configuration", () => {
  test("MDS_API_KEY and MDS_BASE_URL are read when not given", async () => {
    const saved = { ...process.env };
    try {
      process.env.MDS_API_KEY = key;
      process.env.MDS_BASE_URL = `${server.baseUrl}/`;
      const c = new Client();
      assert.equal(c.baseUrl, server.baseUrl);
      assert.equal((await c.usage.get()).key_prefix, key.slice(0, 17));
      delete process.env.MDS_API_KEY;
      assert.throws(() => new Client(), ConfigurationError);
      assert.throws(() => new Client({ apiKey: key, baseUrl: "not a url" }), ConfigurationError);
      assert.throws(
        () => new Client({ apiKey: key, headers: { authorization: "Bearer x" } }),
        /must not hold Authorization/,
      );
    } finally {
      process.env = saved;
    }
  });
});
