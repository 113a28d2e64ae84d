/**
 * Events (contract section 11): the log (`GET /v1/events`, a list like the
 * others) and the stream (`GET /v1/events/stream`, Server-Sent Events over
 * `fetch`, followed with resume).
 *
 * @module
 */
import { ApiError, MdsError, UnavailableError } from "./errors.js";
import { type Http, type QueryValue, sleep } from "./http.js";
import type { WithMeta } from "./meta.js";
import { PagedList, type WalkOptions } from "./pagination.js";
import { SseParser } from "./sse.js";
import type { Event, EventPage, EventStreamQuery, EventsQuery, EventsWireQuery } from "./types.js";

/**
 * Milliseconds a stream may be silent (the service comments every 15 s)
 * before the connection is taken for dead and the stream resumes on a new one.
 */
export const STREAM_SILENCE_MS = 45_000;

/** Options of {@link EventsResource.stream}. */
export interface StreamOptions {
  /** Stops the stream: the loop ends (no error), the connection is closed. */
  signal?: AbortSignal;
  /** Milliseconds of silence after which the connection is resumed on a new one. Default {@link STREAM_SILENCE_MS}. */
  silence?: number;
}

/** A filter's `types` as sent: comma-separated. */
function wireTypes<Q extends { types?: string | readonly string[] }>(query: Q): Omit<Q, "types"> & { types?: string } {
  const { types, ...rest } = query;
  if (types === undefined) return rest;
  return { ...rest, types: typeof types === "string" ? types : types.join(",") };
}

/**
 * The event log and stream: the log as every list (`list`, `pages`, `iter`,
 * `all`, oldest first after `since`) and `stream`, the events as they are
 * committed.
 */
export class EventsResource {
  readonly #http: Http;
  readonly #log: PagedList<"/v1/events">;

  constructor(http: Http) {
    this.#http = http;
    this.#log = new PagedList(http, "/v1/events");
  }

  /** One page of the log: pass `next_cursor` back as `cursor` (with the same filters) for the next. */
  list(query: EventsQuery = {}, options: WalkOptions = {}): Promise<WithMeta<EventPage>> {
    return this.#log.list(wireTypes(query) as EventsWireQuery, options) as Promise<WithMeta<EventPage>>;
  }

  /** Every page of the log from `query.cursor` (or the first) to the last. */
  pages(query: EventsQuery = {}, options: WalkOptions = {}): AsyncGenerator<WithMeta<EventPage>> {
    return this.#log.pages(wireTypes(query) as EventsWireQuery, options) as AsyncGenerator<WithMeta<EventPage>>;
  }

  /** Every event of the log after `since` (none: the oldest kept), a page at a time as the loop asks. */
  iter(query: EventsQuery = {}, options: WalkOptions = {}): AsyncGenerator<Event> {
    return this.#log.iter(wireTypes(query) as EventsWireQuery, options) as AsyncGenerator<Event>;
  }

  /** Every event of the log in one array, with the last page's meta. */
  all(query: EventsQuery = {}, options: WalkOptions = {}): Promise<WithMeta<Event[]>> {
    return this.#log.all(wireTypes(query) as EventsWireQuery, options) as Promise<WithMeta<Event[]>>;
  }

  /**
   * Every event after `since` (none: from the next one committed), as it is
   * committed, for as long as the loop runs:
   *
   * ```ts
   * for await (const e of client.events.stream({ types: ["article.published"] }, { signal })) {
   *   if (e.type === "article.published") console.log(e.id, e.data.headline);
   * }
   * ```
   *
   * A connection that drops, fails or is silent for `silence` ms is opened
   * again after the last event received (`Last-Event-ID`), so nothing is
   * missed or repeated; `503` and failed connections are retried with
   * backoff up to the client's `retry.maxDelay`. Any other error answer
   * (`400` a bad `since`, `401`, `410` {@link EventsExpiredError}, `429`
   * {@link TooManyStreamsError}) is thrown and ends it. Leave the loop
   * (`break`) or abort `signal` to stop.
   */
  async *stream(query: EventStreamQuery = {}, options: StreamOptions = {}): AsyncGenerator<Event> {
    const { since, ...filters } = wireTypes(query);
    const params = filters as Record<string, QueryValue>;
    const { signal } = options;
    const silence = options.silence ?? STREAM_SILENCE_MS;
    const { retry, logger } = this.#http;
    let lastId = since;
    let failures = 0;
    let retryAfter: number | null = null;
    while (!signal?.aborted) {
      if (failures > 0) {
        const ceiling = Math.min(retry.backoff * 2 ** (failures - 1), retry.maxDelay);
        const delay = retryAfter === null ? ceiling / 2 + (Math.random() * ceiling) / 2 : retryAfter;
        try {
          await sleep(Math.min(delay, retry.maxDelay) * 1000, signal);
        } catch {
          return;
        }
      }
      const connection = new AbortController();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const watch = () => {
        clearTimeout(timer);
        timer = setTimeout(() => connection.abort(new DOMException("silent", "TimeoutError")), silence);
      };
      let received = false;
      let why = "ended";
      try {
        watch();
        const response = await this.#http.openStream(
          "/v1/events/stream",
          params,
          lastId,
          signal ? AbortSignal.any([signal, connection.signal]) : connection.signal,
        );
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        const parser = new SseParser();
        try {
          for (;;) {
            watch();
            const { done, value } = await reader.read();
            if (done) break;
            received = true;
            failures = 0;
            retryAfter = null;
            const frames = parser.feed(decoder.decode(value, { stream: true }));
            clearTimeout(timer); // the consumer's time is not the server's silence
            for (const data of frames) {
              const event = parseEvent(data);
              lastId = event.id;
              yield event;
            }
          }
        } finally {
          reader.cancel().catch(() => {});
        }
      } catch (error) {
        if (signal?.aborted) return;
        if (error instanceof UnavailableError) {
          retryAfter = error.retryAfter;
          why = "got 503 unavailable";
        } else if (error instanceof ApiError || error instanceof MdsError) {
          throw error;
        }
        if (!(error instanceof UnavailableError)) why = connection.signal.aborted ? `silent ${silence} ms` : "failed";
      } finally {
        clearTimeout(timer);
        connection.abort();
      }
      if (!received) failures++;
      logger?.(`mds: GET /v1/events/stream ${why}; resuming after ${lastId ?? "(the next event)"}`);
    }
  }
}

function parseEvent(data: string): Event {
  try {
    return JSON.parse(data) as Event;
  } catch {
    throw new MdsError("GET /v1/events/stream: a frame whose data is not JSON");
  }
}
