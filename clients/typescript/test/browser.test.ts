/**
 * The built package in a real browser: headless Chromium loads a page that
 * imports dist/index.js as an ES module and, through a same-origin proxy
 * to a real `mds demo` (mds sends no CORS headers; a base URL with a path,
 * as behind a proxy), lists, walks, reads a company, meets a 404, follows
 * the event stream from an id (fetch's streamed body), and verifies the
 * Standard Webhooks example with the browser's WebCrypto.
 *
 * Skipped without Chromium unless MDS_TEST_REQUIRE_CHROMIUM=1
 * (scripts/typescript-client.sh sets it and installs Chromium).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, normalize } from "node:path";
import { Readable } from "node:stream";
import { test } from "node:test";
import { promisify } from "node:util";
import { PACKAGE, plainWalk, startServer } from "./helpers.js";

const run = promisify(execFile);
const chrome = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].find(existsSync);
const required = process.env.MDS_TEST_REQUIRE_CHROMIUM === "1";

const PAGE = `<!doctype html><meta charset="utf-8"><title>mds-client</title><pre id="out">pending</pre>
<script type="module">
import { Client, NotFoundError, verifyWebhook } from "/dist/index.js";
const out = {};
try {
  const key = await (await fetch("/key")).text();
  const client = new Client({ apiKey: key, baseUrl: location.origin + "/api" });
  const page = await client.companies.list({ exchange: "nse", limit: 3 });
  out.page = { n: page.data.length, hasMore: page.has_more, remaining: page.meta.remaining, limit: page.meta.limit };
  const slugs = [];
  for await (const a of client.news.iter({ limit: 7 })) slugs.push(a.slug);
  out.slugs = slugs;
  out.reliance = (await client.companies.get("INE002A01018")).name;
  try {
    await client.companies.get("US88160R1014");
    out.notFound = "no error";
  } catch (e) {
    out.notFound = e instanceof NotFoundError ? e.status + " " + e.code : String(e);
  }
  const headers = new Headers({
    "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
    "webhook-timestamp": "1614265330",
    "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
  });
  const log = await client.events.list({ types: ["article.published"], limit: 4 });
  const since = log.data[1].id;
  const streamed = [];
  for await (const e of client.events.stream({ types: ["article.published"], since })) {
    streamed.push(e.id);
    if (streamed.length === 2) break;
  }
  out.events = { log: log.data.slice(2).map((e) => e.id), streamed };
  out.webhook = await verifyWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", headers, '{"test": 2432232314}', { now: 1614265330000 });
  out.shown = String(client) + JSON.stringify(client);
  out.leaked = out.shown.includes(key);
} catch (e) {
  out.error = String(e && e.stack || e);
}
document.getElementById("out").textContent = JSON.stringify(out);
</script>`;

test("the package works in headless Chromium against a real mds", { skip: !chrome && !required }, async () => {
  assert.ok(chrome, "no Chromium: apt-get install chromium");
  const mds = await startServer();
  const key = await mds.makeKey();
  const proxied: string[] = [];
  const web = createServer(async (req, res) => {
    const url = req.url ?? "/";
    if (url === "/") {
      res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    } else if (url === "/key") {
      res.writeHead(200, { "content-type": "text/plain" }).end(key);
    } else if (url.startsWith("/dist/")) {
      const file = normalize(join(PACKAGE, url));
      if (!file.startsWith(join(PACKAGE, "dist")) || !existsSync(file)) return res.writeHead(404).end();
      res.writeHead(200, { "content-type": "text/javascript" }).end(readFileSync(file));
    } else if (url.startsWith("/api/")) {
      // The same-origin proxy: the page's request as it came, to mds.
      proxied.push(url);
      const answer = await fetch(`${mds.baseUrl}${url.slice(4)}`, {
        headers: {
          authorization: String(req.headers.authorization ?? ""),
          accept: String(req.headers.accept ?? ""),
          "accept-encoding": "identity",
          ...(req.headers["last-event-id"] ? { "last-event-id": String(req.headers["last-event-id"]) } : {}),
        },
      });
      const headers = Object.fromEntries(
        [...answer.headers].filter(([h]) => !["content-length", "content-encoding", "connection"].includes(h)),
      );
      res.writeHead(answer.status, headers);
      // Piped as it comes: the event stream has no end.
      if (answer.body) {
        const body = Readable.fromWeb(answer.body as import("node:stream/web").ReadableStream);
        res.once("close", () => body.destroy());
        body.on("error", () => res.destroy()).pipe(res);
      } else res.end();
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
  const profile = mkdtempSync(join(tmpdir(), "mds-ts-chromium-"));
  try {
    const origin = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
    const flags = [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-extensions",
      "--disable-background-networking",
      `--user-data-dir=${profile}`,
      "--virtual-time-budget=20000",
      "--dump-dom",
      `${origin}/`,
    ];
    const { stdout } = await run(chrome as string, flags, { timeout: 120_000, maxBuffer: 16 << 20 });
    const text = /<pre id="out">([^<]*)<\/pre>/.exec(stdout)?.[1];
    assert.ok(text && text !== "pending", `the page did not finish: ${stdout.slice(0, 500)}`);
    const out = JSON.parse(text.replaceAll("&quot;", '"').replaceAll("&amp;", "&")) as Record<string, unknown>;
    assert.equal(out.error, undefined, String(out.error));
    assert.deepEqual(out.page, {
      n: 3,
      hasMore: true,
      remaining: (out.page as { remaining: number }).remaining,
      limit: 600,
    });
    assert.ok(typeof (out.page as { remaining: unknown }).remaining === "number");
    const slugs = (await plainWalk<{ slug: string }>(mds, "/v1/news")).map((a) => a.slug);
    assert.deepEqual(out.slugs, slugs);
    assert.equal(out.reliance, "Reliance Industries Limited");
    assert.equal(out.notFound, "404 not_found");
    const events = out.events as { log: string[]; streamed: string[] };
    assert.equal(events.streamed.length, 2);
    assert.deepEqual(events.streamed, events.log, "the stream from an id: the log after it");
    assert.deepEqual(out.webhook, { test: 2432232314 });
    assert.equal(out.leaked, false);
    assert.ok(proxied.every((u) => u.startsWith("/api/v1/")) && proxied.length >= 10, proxied.join(" "));
  } finally {
    web.close();
    rmSync(profile, { recursive: true, force: true });
    await mds.stop();
  }
});
