/**
 * The retry policy, and retries of `503` (which the service gives only when
 * its store is down) against a real HTTP server on a loopback port that
 * answers as the service does: `503` with `Retry-After` and a problem body,
 * then `200`.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, test } from "node:test";
import {
  ApiError,
  Client,
  MdsError,
  RateLimitError,
  RetryPolicy,
  TransportError,
  UnavailableError,
} from "../src/index.js";

describe("RetryPolicy", () => {
  test("honours Retry-After with jitter, gives up past the cap, backs off without it", () => {
    const p = new RetryPolicy({ maxRetries: 3, backoff: 0.5, maxDelay: 10, jitter: 0.2 });
    const delays = Array.from({ length: 200 }, () => p.delay(1, 2));
    assert.ok(delays.every((d) => d !== null && d >= 2 && d <= 2.4));
    assert.ok(new Set(delays).size > 1, "jittered");
    assert.equal(p.delay(1, 11), null, "longer than the cap: give up at once");
    assert.equal(p.delay(4, 1), null, "out of retries");
    assert.equal(
      p.delay(1, 10, () => 1),
      10,
      "never past the cap",
    );
    const backoff = Array.from({ length: 100 }, () => p.delay(3, null));
    assert.ok(backoff.every((d) => d !== null && d >= 1 && d <= 2));
    assert.equal(new RetryPolicy({ maxRetries: 0 }).delay(1, 1), null);
    assert.throws(() => new RetryPolicy({ maxRetries: -1 }), RangeError);
  });
});

const problem = {
  type: "/problems/unavailable",
  title: "Service unavailable",
  status: 503,
  detail: "the store is unreachable; retry shortly",
  code: "unavailable",
  request_id: "01JD0000000000000000000000",
};
const usage = {
  key_prefix: "mds_live_abcdefgh",
  tier: "pro",
  plan_tier: "pro",
  entitled: true,
  environment: "live",
  rate_limit_per_minute: 600,
  current_month: { period_start: "2026-11-01T00:00:00+00:00", requests: 3, quota: 10, remaining: 7 },
  history: [],
};

/** A server that answers `503` `failures` times, then `200`; records each request's arrival. */
async function flaky(
  failures: number,
): Promise<{ server: Server; url: string; seen: Array<[number, IncomingMessage]> }> {
  const seen: Array<[number, IncomingMessage]> = [];
  const server = createServer((req, res) => {
    seen.push([performance.now(), req]);
    if (seen.length <= failures) {
      res.writeHead(503, { "content-type": "application/problem+json", "retry-after": "1" });
      res.end(JSON.stringify(problem));
    } else {
      res.writeHead(200, { "content-type": "application/json", "x-ratelimit-remaining": "5", "x-request-id": "r2" });
      res.end(JSON.stringify(usage));
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe("503", () => {
  test("is retried after Retry-After, with the key on every attempt", async () => {
    const { server, url, seen } = await flaky(1);
    try {
      const c = new Client({ apiKey: "mds_live_test", baseUrl: url, retry: { jitter: 0 } });
      const got = await c.usage.get();
      assert.equal(seen.length, 2);
      const [[t0], [t1]] = seen as [[number, IncomingMessage], [number, IncomingMessage]];
      assert.ok(t1 - t0 >= 990, `retried after ${t1 - t0} ms`);
      assert.ok(seen.every(([, req]) => req.headers.authorization === "Bearer mds_live_test"));
      assert.equal(got.meta.remaining, 5);
      assert.equal(got.meta.requestId, "r2");
    } finally {
      server.close();
    }
  });

  test("out of retries: UnavailableError with the problem body", async () => {
    const { server, url, seen } = await flaky(5);
    try {
      const c = new Client({ apiKey: "mds_live_test", baseUrl: url, retry: { maxRetries: 0 } });
      await assert.rejects(c.usage.get(), (e: unknown) => {
        assert.ok(e instanceof UnavailableError);
        assert.deepEqual([e.status, e.code, e.retryAfter, e.requestId], [503, "unavailable", 1, problem.request_id]);
        return true;
      });
      assert.equal(seen.length, 1);
    } finally {
      server.close();
    }
  });

  test("an AbortSignal stops the wait before a retry", async () => {
    const { server, url } = await flaky(5);
    try {
      const c = new Client({ apiKey: "mds_live_test", baseUrl: url });
      const t0 = performance.now();
      await assert.rejects(
        c.usage.get({ signal: AbortSignal.timeout(200) }),
        (e: unknown) => e instanceof TransportError && /aborted/.test(e.message),
      );
      assert.ok(performance.now() - t0 < 900);
    } finally {
      server.close();
    }
  });
});

describe("timeout", () => {
  test("an attempt that gets no answer in time is a TransportError, retried, then thrown", async () => {
    let requests = 0;
    const server = createServer(() => {
      requests++; // and never answer
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const lines: string[] = [];
      const c = new Client({
        apiKey: "mds_live_test",
        baseUrl: url,
        timeout: 150,
        retry: { maxRetries: 1, backoff: 0.01 },
        logger: (l) => lines.push(l),
      });
      const t0 = performance.now();
      await assert.rejects(c.usage.get(), (e: unknown) => e instanceof TransportError && /timed out/.test(e.message));
      assert.ok(performance.now() - t0 >= 290);
      assert.equal(requests, 2);
      assert.match(lines[0] ?? "", /timed out; retry 1\/1/);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe("requests", () => {
  test("a base URL's path is kept; path values are encoded; unset filters are not sent", async () => {
    const seen: IncomingMessage[] = [];
    const server = createServer((req, res) => {
      seen.push(req);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ data: [], has_more: false, next_cursor: null }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/behind/a/proxy/`;
      const c = new Client({ apiKey: "mds_live_test", baseUrl: base, headers: { "X-Trace": "t1" } });
      assert.equal(c.baseUrl, base.slice(0, -1));
      await c.companies.list({ exchange: "nse", search: "a&b=c", industry: undefined, limit: 5 });
      await c.news.article("a/b?c");
      assert.deepEqual(
        seen.map((r) => r.url),
        ["/behind/a/proxy/v1/companies?exchange=nse&search=a%26b%3Dc&limit=5", "/behind/a/proxy/v1/news/a%2Fb%3Fc"],
      );
      assert.equal(seen[0]?.headers.accept, "application/json");
      assert.equal(seen[0]?.headers["x-trace"], "t1");
      assert.equal(seen[0]?.headers.authorization, "Bearer mds_live_test");
    } finally {
      server.close();
    }
  });
});

describe("answers that are not mds's", () => {
  test("a 200 that is not JSON, a 502 from a proxy with an HTML page", async () => {
    const server = createServer((req, res) => {
      const status = req.url?.includes("news") ? 502 : 200;
      res.writeHead(status, { "content-type": "text/html" }).end("<h1>proxy</h1>");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const c = new Client({
        apiKey: "mds_live_test",
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      });
      await assert.rejects(
        c.usage.get(),
        (e: unknown) => e instanceof MdsError && !(e instanceof ApiError) && /not JSON/.test(e.message),
      );
      await assert.rejects(c.news.list(), (e: unknown) => {
        assert.ok(e instanceof ApiError && e.name === "ServerError");
        assert.deepEqual([e.status, e.code, e.detail], [502, "http_502", "HTTP 502 Bad Gateway"]);
        return true;
      });
    } finally {
      server.close();
    }
  });
});

/**
 * A server that reads each request whole, records its method, then closes
 * the connection without an answer (`status` undefined: the client cannot
 * know whether the request was acted on) or answers `status` with a problem
 * body and `Retry-After: 0`.
 */
async function dropping(status?: number): Promise<{ server: Server; url: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      seen.push(req.method ?? "?");
      if (status === undefined) {
        req.socket.destroy();
        return;
      }
      const code = status === 429 ? "rate_limited" : "unavailable";
      res.writeHead(status, { "content-type": "application/problem+json", "retry-after": "0" });
      res.end(JSON.stringify({ ...problem, status, code }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe("writes", () => {
  const retry = { maxRetries: 2, backoff: 0.01, maxDelay: 1 };

  test("a POST that may have been acted on is not sent again; a DELETE is", async () => {
    const { server, url, seen } = await dropping();
    try {
      const c = new Client({ apiKey: "mds_live_test", baseUrl: url, retry });
      await assert.rejects(
        c.webhooks.create({ url: "https://hooks.example/a" }),
        (e: unknown) => e instanceof TransportError && /POST \/v1\/webhooks: .*may have acted on it/.test(e.message),
      );
      assert.deepEqual(seen, ["POST"], "sent once: a second could make a second endpoint");
      await assert.rejects(c.webhooks.delete("we_1"), TransportError);
      assert.deepEqual(seen, ["POST", "DELETE", "DELETE", "DELETE"], "a DELETE sets a state: repeated");
    } finally {
      server.close();
    }
  });

  test("a POST answered 503 is not sent again; one answered 429 is", async () => {
    const unavailable = await dropping(503);
    const limited = await dropping(429);
    try {
      const c = new Client({ apiKey: "mds_live_test", baseUrl: unavailable.url, retry });
      await assert.rejects(c.webhooks.rotateSecret("we_1"), UnavailableError);
      assert.deepEqual(unavailable.seen, ["POST"]);
      const d = new Client({ apiKey: "mds_live_test", baseUrl: limited.url, retry });
      await assert.rejects(d.webhooks.test("we_1"), RateLimitError);
      assert.deepEqual(limited.seen, ["POST", "POST", "POST"], "a 429 is refused before any work");
    } finally {
      unavailable.server.close();
      limited.server.close();
    }
  });

  test("a POST that never connected is sent again", async () => {
    const { server, url } = await dropping();
    await new Promise<void>((r) => server.close(() => r())); // nothing listens there now
    const lines: string[] = [];
    const c = new Client({
      apiKey: "mds_live_test",
      baseUrl: url,
      retry: { ...retry, maxRetries: 1 },
      logger: (l) => lines.push(l),
    });
    await assert.rejects(c.webhooks.create({ url: "https://hooks.example/a" }), TransportError);
    assert.deepEqual(lines.length, 1);
    assert.match(lines[0] ?? "", /^mds: POST \/v1\/webhooks: no answer; retry 1\/1/);
  });
});
