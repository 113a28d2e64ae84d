/**
 * Events (contract 11) against a real `mds demo`: the log walked and
 * filtered, a bad `since`, the stream receiving a change made while it is
 * open (`mds import news`), resuming from an id with `Last-Event-ID` and
 * after silence, stopping with an AbortSignal, the third stream's typed
 * 429; the typed 410 with a fake fetch; the SSE parser.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import {
  AuthenticationError,
  Client,
  type Event,
  EventsExpiredError,
  ExpiredError,
  InvalidRequestError,
  RateLimitError,
  SseParser,
  TooManyStreamsError,
} from "../src/index.js";
import { plainWalk, serverWithClient } from "./helpers.js";

const PUBLISHED = "article.published";

const { server, client } = await serverWithClient();
after(() => server.stop());

/** Imports one new article with `mds import news`; its slug. */
async function importArticle(): Promise<string> {
  const slug = `ts-events-${randomBytes(6).toString("hex")}`;
  const file = join(server.workdir, `${slug}.jsonl`);
  writeFileSync(file, `${JSON.stringify({ slug, headline: `Events test ${slug}`, tags: ["client-test"] })}\n`);
  await server.mds("import", "news", file);
  return slug;
}

/** `p`, or a failure after `ms`. */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The next event of a stream, within 30 s. */
async function next(stream: AsyncGenerator<Event>): Promise<Event> {
  const r = await within(stream.next(), 30_000, "the stream");
  assert.ok(!r.done, "the stream ended");
  return r.value;
}

const hex = (id: string) => BigInt(`0x${id.slice(4)}`);

describe("the event log", () => {
  test("iter() walks what plain fetch walks, page by page, ids increasing", async () => {
    const everything = await plainWalk<Event>(server, "/v1/events");
    const walked: Event[] = [];
    for await (const e of client.events.iter({ limit: 200 })) walked.push(e);
    assert.deepEqual(walked, everything);
    let pages = 0;
    for await (const page of client.events.pages({ limit: 200 })) {
      pages++;
      assert.equal(page.has_more, page.next_cursor !== null);
    }
    assert.equal(pages, Math.ceil(everything.length / 200));
    for (let i = 1; i < walked.length; i++) assert.ok(hex(walked[i - 1]?.id ?? "") < hex(walked[i]?.id ?? ""));
    assert.ok(new Set(walked.map((e) => e.type)).has("company.changed"));
    const page = await client.events.list({ limit: 3 });
    assert.equal(page.data.length, 3);
    assert.equal(page.meta.status, 200);
    // since: what came after an event, oldest first
    const after = await client.events.all({ since: everything.at(-5)?.id });
    assert.deepEqual(after, everything.slice(-4));
  });

  test("filters: types (an array or a list), isin, tag", async () => {
    const articles = await client.events.all({ types: [PUBLISHED] });
    assert.ok(articles.length > 0 && articles.every((e) => e.type === PUBLISHED));
    assert.deepEqual(await client.events.all({ types: PUBLISHED }), articles);
    const isin = "INE002A01018";
    const about = await client.events.all({ isin, types: [PUBLISHED, "company.changed"] });
    assert.ok(about.length >= 2);
    for (const e of about) {
      if (e.type === "company.changed") assert.equal(e.data.company.isin, isin);
      else if (e.type === PUBLISHED) assert.equal(e.data.isin, isin);
    }
    const tagged = await client.events.all({ tag: "earnings" });
    assert.ok(tagged.length > 0);
    for (const e of tagged)
      assert.ok((e.type === PUBLISHED || e.type === "article.updated") && e.data.tags.includes("earnings"));
  });

  test("a since not issued by the service is a typed 400", async () => {
    await assert.rejects(client.events.list({ since: "evt_zz" }), (e: unknown) => {
      assert.ok(e instanceof InvalidRequestError);
      assert.deepEqual([e.status, e.code, e.param], [400, "invalid_cursor", "since"]);
      return true;
    });
  });

  test("410 events_expired and 429 too_many_streams are typed (fake fetch)", async () => {
    const fake = (async (input: RequestInfo | URL) => {
      const stream = String(input).includes("/stream");
      const [code, status] = stream ? ["too_many_streams", 429] : ["events_expired", 410];
      return new Response(JSON.stringify({ code, status, detail: "d", violated_policies: ["streams"] }), {
        status,
        headers: { "content-type": "application/problem+json", "retry-after": "1" },
      });
    }) as typeof fetch;
    const c = new Client({ apiKey: "k", baseUrl: "http://fake", fetch: fake, retry: { maxRetries: 0 } });
    const expired = await c.events.list({ since: "evt_0000000000000001" }).catch((e: unknown) => e);
    assert.ok(expired instanceof EventsExpiredError && expired instanceof ExpiredError);
    const tooMany = await c.events
      .stream()
      .next()
      .catch((e: unknown) => e);
    assert.ok(tooMany instanceof TooManyStreamsError && tooMany instanceof RateLimitError);
  });
});

describe("the event stream", () => {
  test("503 is retried; an ended stream resumes after its last event; another error ends it (fake fetch)", async () => {
    const seen: [string | null, string | null][] = [];
    const frame = (n: number) => {
      const event = { id: `evt_${n.toString(16).padStart(16, "0")}`, type: "ping", created_at: "2026-11-26T00:00:00Z" };
      return `id: ${event.id}\nevent: ping\ndata: ${JSON.stringify({ ...event, data: {} })}\n\n`;
    };
    const fake = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      seen.push([headers.get("last-event-id"), new URL(String(input)).searchParams.get("types")]);
      const events = ({ 2: [1, 2], 3: [3] } as Record<number, number[]>)[seen.length];
      if (seen.length === 1) return new Response(JSON.stringify({ code: "unavailable", status: 503 }), { status: 503 });
      if (events) return new Response(`: keep-alive\n\n${events.map(frame).join("")}`, { status: 200 });
      return new Response(JSON.stringify({ code: "invalid_api_key", status: 401 }), { status: 401 });
    }) as typeof fetch;
    const c = new Client({ apiKey: "k", baseUrl: "http://fake", fetch: fake, retry: { backoff: 0.01 } });
    const got: string[] = [];
    const start = "evt_0000000000000000";
    await assert.rejects(async () => {
      for await (const e of c.events.stream({ since: start, types: ["ping", PUBLISHED] })) got.push(e.id);
    }, AuthenticationError);
    assert.deepEqual(
      got,
      [1, 2, 3].map((n) => `evt_${n.toString(16).padStart(16, "0")}`),
    );
    const types = `ping,${PUBLISHED}`;
    assert.deepEqual(seen, [
      [start, types], // 503: retried from the same position
      [start, types], // events 1 and 2, then the end
      ["evt_0000000000000002", types], // resumed after 2: event 3
      ["evt_0000000000000003", types], // resumed after 3: the 401 ends it
    ]);
  });

  test("receives an article imported while it is open", async () => {
    const stream = client.events.stream({ types: [PUBLISHED] });
    const first = next(stream); // opens the connection: from the next event committed
    await new Promise((r) => setTimeout(r, 3000));
    const slug = await importArticle();
    const e = await first;
    assert.equal(e.type, PUBLISHED);
    if (e.type === PUBLISHED) {
      assert.equal(e.data.slug, slug);
      assert.deepEqual(e.data.tags, ["client-test"]);
    }
    assert.equal(e.id, (await client.events.all({ types: [PUBLISHED] })).at(-1)?.id);
    await stream.return(undefined);
  });

  test("resumes from an id (Last-Event-ID) in order, and after silence", async () => {
    const lines: string[] = [];
    const c = new Client({ apiKey: await server.makeKey(), baseUrl: server.baseUrl, logger: (l) => lines.push(l) });
    const log = await c.events.all({ types: [PUBLISHED] });
    assert.ok(log.length >= 5);
    const stream = c.events.stream({ types: [PUBLISHED], since: log.at(-5)?.id }, { silence: 1000 });
    const got = [await next(stream), await next(stream), await next(stream), await next(stream)];
    assert.deepEqual(
      got.map((e) => e.id),
      log.slice(-4).map((e) => e.id),
    );
    const pending = next(stream);
    await new Promise((r) => setTimeout(r, 2500)); // silent for more than 1 s: it reconnects
    const slug = await importArticle();
    const e = await pending;
    assert.ok(e.type === PUBLISHED && e.data.slug === slug);
    assert.ok(hex(e.id) > hex(log.at(-1)?.id ?? ""));
    const lastId = log.at(-1)?.id ?? "";
    assert.ok(
      lines.some((l) => l.includes(`silent 1000 ms; resuming after ${lastId}`)),
      lines.join("\n"),
    );
    await stream.return(undefined);
  });

  test("an AbortSignal stops it; a bad since ends it with a typed 400", async () => {
    const controller = new AbortController();
    const seen: Event[] = [];
    const loop = (async () => {
      for await (const e of client.events.stream({}, { signal: controller.signal })) seen.push(e);
    })();
    await new Promise((r) => setTimeout(r, 500));
    controller.abort();
    await within(loop, 5000, "the aborted loop");
    await assert.rejects(client.events.stream({ since: "evt_zz" }).next(), InvalidRequestError);
  });

  test("two open streams per key: the third is a typed 429, not retried", async () => {
    const c = new Client({ apiKey: await server.makeKey(), baseUrl: server.baseUrl });
    const since = (await c.events.all({ types: [PUBLISHED] })).at(-2)?.id;
    const open = [c.events.stream({ types: [PUBLISHED], since }), c.events.stream({ types: [PUBLISHED], since })];
    for (const s of open) await next(s); // both connected
    await assert.rejects(c.events.stream().next(), (e: unknown) => {
      assert.ok(e instanceof TooManyStreamsError && e instanceof RateLimitError);
      assert.deepEqual([e.status, e.code, e.violatedPolicies], [429, "too_many_streams", ["streams"]]);
      return true;
    });
    for (const s of open) await s.return(undefined);
  });
});

test("SseParser: frames in any chunks, comments and keep-alives skipped, CRLF", () => {
  const text =
    ': keep-alive\n\nid: evt_1\nevent: ping\ndata: {"a":\ndata: 1}\n\nid: evt_2\r\ndata:{}\r\n\r\ndata: tail';
  for (const size of [1, 2, 7, text.length]) {
    const parser = new SseParser();
    const got: string[] = [];
    for (let i = 0; i < text.length; i += size) got.push(...parser.feed(text.slice(i, i + size)));
    assert.deepEqual(got, ['{"a":\n1}', "{}"], `chunks of ${size}`);
    if (size === text.length) assert.deepEqual(parser.feed("\n\n"), ["tail"]);
  }
});
